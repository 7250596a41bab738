/**
 * Answers of kept listings, kept rendered. A client polling a folder gets, call after call, the
 * same items from the listing cache (operations/tree/listing-cache.ts): the very same arrays, which are
 * never changed and stand for one listing at one version. Rendering them (an element and a dozen
 * attributes per item) cost more than everything else the call does, so the document rendered for
 * such a listing is kept with it, per form of answer, and sent again as it is.
 *
 * Only the answer's bytes are kept: every call is still read, bound, authenticated, its sign checked
 * and its folder checked before the listing (and so this) is reached. A listing that is not the
 * cache's (too big, the cache off, a miss) is rendered and streamed as before. A kept document
 * counts in its listing's weight in the app's caches and goes with it.
 */
import type { ServerResponse } from 'node:http';
import type { CallCaches } from '../../operations/caches';
import { keepRendered, keptListingOf } from '../../operations/tree/listing-cache';
import { answer, answerXmlStream, type AnswerOptions } from '../http-common';
import type { Answered } from './results';
import { StringSink, XmlWriter, type XmlWriterOptions } from './xml-writer';

/**
 * answerXmlStream, except that the document of a kept listing is rendered once per `variant` (what
 * else decides the bytes: the form, the operation, the namespace) and then sent as kept.
 */
export async function answerXmlDocument(
  res: ServerResponse,
  caches: CallCaches,
  outcome: Answered,
  variant: string,
  options: AnswerOptions,
  writerOptions: XmlWriterOptions,
  render: (writer: XmlWriter) => Promise<void>,
): Promise<void> {
  const listing = outcome.kind === 'result' && outcome.result.kind === 'listing' ? outcome.result : null;
  const kept = listing && keptListingOf(listing);
  if (!listing || !kept) return answerXmlStream(res, options, writerOptions, render);
  // GetFilesWhitPath's own path is part of the document (its items' paths are in the items).
  const key = listing.path === undefined ? variant : `${variant}|${JSON.stringify(listing.path)}`;
  let body = kept.rendered.get(key);
  if (!body) {
    const sink = new StringSink();
    const writer = new XmlWriter(sink, writerOptions);
    await render(writer);
    await writer.flush();
    body = Buffer.from(sink.toString(), 'utf8');
    keepRendered(caches, kept, key, body);
  }
  answer(res, options, body);
}
