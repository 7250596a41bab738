/**
 * Answers of kept listings, kept rendered: a polled folder gets the same immutable item arrays from the listing cache,
 * and rendering them cost more than the rest of the call. Only the bytes are kept; every call is still read, bound,
 * authenticated and checked. The document counts in its listing's weight in the app's caches.
 */
import type { ServerResponse } from 'node:http';
import type { CallCaches } from '../../operations/caches';
import { keepRendered, keptListingOf } from '../../operations/tree/listing-cache';
import { answer, answerXmlStream, type AnswerOptions } from '../http-common';
import type { Answered } from './results';
import { StringSink, XmlWriter, type XmlWriterOptions } from './xml-writer';

/** answerXmlStream, with a kept listing's document rendered once per `variant` (form, operation, namespace), then reused. */
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
    // Its own allocation: Buffer.from puts a small body in a shared 8 KiB slab, which it would keep alive uncounted.
    const text = sink.toString();
    body = Buffer.allocUnsafeSlow(Buffer.byteLength(text, 'utf8'));
    body.write(text, 'utf8');
    keepRendered(caches, kept, key, body);
  }
  answer(res, options, body);
}
