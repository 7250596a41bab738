/**
 * Answers of kept listings, kept rendered. A client polling a folder gets, call after call, the
 * same items from the listing cache (operations/listing-cache.ts): the very same arrays, which are
 * never changed and stand for one listing at one version. Rendering them (an element and a dozen
 * attributes per item) cost more than everything else the call does, so the document rendered for
 * such a listing is kept, per form of answer, and sent again as it is.
 *
 * Only the answer's bytes are kept: every call is still read, bound, authenticated, its sign checked
 * and its folder checked before the listing (and so this) is reached. A listing that is not the
 * cache's (too big, the cache off, a miss) is rendered and streamed as before.
 *
 * Bound: half of FSS_LISTING_CACHE_MB (the listing cache has the other half), least recently used
 * first. A kept document dies with its listing's arrays at the latest (a WeakMap on them).
 */
import type { ServerResponse } from 'node:http';
import type { Config } from '../config';
import type { FolderItem, Listing } from '../operations/context';
import { isKeptListing } from '../operations/listing-cache';
import { answer, answerXmlStream, type AnswerOptions } from './http-common';
import type { Answered } from './results';
import { StringSink, XmlWriter, type XmlWriterOptions } from './xml-writer';

const MIB = 1024 * 1024;

interface Rendered {
  /**
   * The listing it renders, held weakly: a listing the cache has let go of is not kept alive by
   * its rendered answer (which then waits for its turn in the LRU order, counted in the bound).
   */
  readonly items: WeakRef<readonly FolderItem[]>;
  readonly variant: string;
  readonly body: Buffer;
  /** When it was last put at the end of the order. */
  placedAt: number;
}

/**
 * Documents by listing (its folders array) and variant, least recently used first. As in the
 * listing cache, a document used is moved to the end only when at least half as many as are kept
 * have been placed after it since it last was.
 */
class RenderedAnswers {
  readonly #byListing = new WeakMap<readonly FolderItem[], Map<string, Rendered>>();
  readonly #order = new Set<Rendered>();
  #bytes = 0;
  /** Placements at the end of the order so far. */
  #placements = 0;

  constructor(private readonly maxBytes: number) {}

  get(items: readonly FolderItem[], variant: string): Buffer | undefined {
    const rendered = this.#byListing.get(items)?.get(variant);
    if (!rendered || !this.#order.has(rendered)) return undefined;
    if (this.#placements - rendered.placedAt >= this.#order.size / 2) {
      this.#order.delete(rendered);
      this.#order.add(rendered);
      rendered.placedAt = ++this.#placements;
    }
    return rendered.body;
  }

  put(items: readonly FolderItem[], variant: string, body: Buffer): void {
    if (body.length > this.maxBytes) return;
    while (this.#bytes + body.length > this.maxBytes) {
      const oldest = this.#order.values().next().value as Rendered;
      this.#order.delete(oldest);
      const items = oldest.items.deref();
      if (items) this.#byListing.get(items)?.delete(oldest.variant);
      this.#bytes -= oldest.body.length;
    }
    let variants = this.#byListing.get(items);
    if (!variants) this.#byListing.set(items, (variants = new Map()));
    const rendered = { items: new WeakRef(items), variant, body, placedAt: ++this.#placements };
    variants.set(variant, rendered);
    this.#order.add(rendered);
    this.#bytes += body.length;
  }
}

const perConfig = new WeakMap<Config, RenderedAnswers | null>();

function renderedAnswersOf(config: Config): RenderedAnswers | null {
  let answers = perConfig.get(config);
  if (answers === undefined) {
    answers = config.listingCacheMb > 0 ? new RenderedAnswers((config.listingCacheMb * MIB) / 2) : null;
    perConfig.set(config, answers);
  }
  return answers;
}

/** The listing of an outcome when it is one the listing cache keeps; null otherwise. */
function keptListingOf(outcome: Answered): Listing | null {
  if (outcome.kind !== 'result' || outcome.result.kind !== 'listing') return null;
  return isKeptListing(outcome.result) ? outcome.result : null;
}

/**
 * answerXmlStream, except that the document of a kept listing is rendered once per `variant` (what
 * else decides the bytes: the form, the operation, the namespace) and then sent as kept.
 */
export async function answerXmlDocument(
  res: ServerResponse,
  config: Config,
  outcome: Answered,
  variant: string,
  options: AnswerOptions,
  writerOptions: XmlWriterOptions,
  render: (writer: XmlWriter) => Promise<void>,
): Promise<void> {
  const listing = keptListingOf(outcome);
  const answers = listing && renderedAnswersOf(config);
  if (!listing || !answers) return answerXmlStream(res, options, writerOptions, render);
  // GetFilesWhitPath's own path is part of the document (its items' paths are in the items).
  const key = listing.path === undefined ? variant : `${variant}|${JSON.stringify(listing.path)}`;
  const items = listing.folders as readonly FolderItem[];
  let body = answers.get(items, key);
  if (!body) {
    const sink = new StringSink();
    const writer = new XmlWriter(sink, writerOptions);
    await render(writer);
    await writer.flush();
    body = Buffer.from(sink.toString(), 'utf8');
    answers.put(items, key, body);
  }
  answer(res, options, body);
}
