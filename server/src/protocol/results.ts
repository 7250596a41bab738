/**
 * Result documents (DECISIONS.md §2): how each kind of operation result, and each refusal, is
 * written. The same writer serves SOAP (inside <OpResult>) and HTTP GET/POST (a whole document).
 */
import type { OperationSpec } from '../catalog/operations';
import type { EmailShareInfo, Item, ItemSource, Listing, OpResult } from '../operations/context';
import type { OpError } from '../operations/errors';
import type { AttributeValue, Attributes, XmlWriter } from './xml-writer';

/** How a call ended: a result, a refusal (layer 2), or an unexpected failure logged as an incident (layer 3). */
export type Outcome =
  | { readonly kind: 'result'; readonly result: OpResult }
  | { readonly kind: 'refusal'; readonly refusal: OpError }
  | { readonly kind: 'incident'; readonly incident: string };

export type Answered = Exclude<Outcome, { kind: 'incident' }>;

/** ISO 8601 UTC to the second, as every time in a result document is written. */
export function isoTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function refusalAttributes(refusal: OpError): Attributes {
  return [['code', refusal.code], ['msg', refusal.message], ...Object.entries(refusal.details)];
}

/** The text of a string result (ShareImageUpload): its value, or `ERROR <code> <message>`. */
export function resultString(outcome: Answered): string {
  if (outcome.kind === 'refusal') return `ERROR ${outcome.refusal.code} ${outcome.refusal.message}`;
  const { result } = outcome;
  if (result.kind !== 'string') throw new Error(`a ${result.kind} result for a string operation`);
  return result.value;
}

/** Writes the result element of an XML-result operation. */
export async function writeResultElement(writer: XmlWriter, op: OperationSpec, outcome: Answered): Promise<void> {
  if (outcome.kind === 'refusal') {
    writer.empty('result', refusalAttributes(outcome.refusal));
    return;
  }
  const { result } = outcome;
  switch (result.kind) {
    case 'token':
      writer.textElement(
        'token',
        [
          ['uid', result.uid],
          ['key', result.key],
          ['expires', isoTime(result.expires)],
        ],
        result.token,
      );
      return;
    case 'tokenRefused':
      writer.textElement(
        'token',
        [
          ['reason', result.reason],
          ['retryAfter', result.retryAfter],
        ],
        '0',
      );
      return;
    case 'empty':
      writer.empty('result', OK);
      return;
    case 'item':
      writer.start('result', OK);
      writeItem(writer, result.item);
      writer.end();
      return;
    case 'url':
      writer.empty('result', [...OK, ['url', result.url], ['expires', result.expires && isoTime(result.expires)]]);
      return;
    case 'listing':
      await writeListing(writer, result);
      return;
    case 'emailShareInfo':
      await writeEmailShareInfo(writer, result);
      return;
    case 'string':
      throw new Error(`${op.name} returned a string but its catalog entry says ${op.result}`);
  }
}

const OK: Attributes = [
  ['code', 0],
  ['msg', ''],
];

/** `<folder …/>` or `<file …/>` with the attributes of DECISIONS.md §2, in a fixed order. */
export function writeItem(writer: XmlWriter, item: Item): void {
  const attributes: Array<readonly [string, AttributeValue]> = [
    ['id', item.id],
    ['dir', item.dir],
    ['name', item.name],
  ];
  if (item.type === 'file') attributes.push(['ext', item.ext]);
  attributes.push(['size', item.size]);
  if (item.type === 'file') attributes.push(['hash', item.hash]);
  attributes.push(
    ['time', isoTime(item.time)],
    ['shared', item.shared],
    ['linked', item.linked],
    ['encrypted', item.encrypted],
    ['tip', item.encrypted ? (item.tip ?? '') : undefined],
    ['progress', item.type === 'folder' ? item.progress : undefined],
    ['path', item.path],
  );
  if (item.bin) attributes.push(['deleted', isoTime(item.bin.deleted)], ['from', item.bin.from], ['purge', isoTime(item.bin.purge)]);
  // DECISIONS.md §2 names both a share's and a link's address `url`: an item carries the
  // attributes of one listing only (GetShareFiles or GetLinkFiles), never both.
  if (item.share && item.link) throw new Error(`item ${item.id} carries both share and link attributes`);
  if (item.share) {
    const share = item.share;
    attributes.push(
      ['code', share.code],
      ['url', share.url],
      ['downpwd', share.downpwd],
      ['downValue', share.downValue],
      ['downloads', share.downloads],
      ['description', share.description],
      ['image', share.image],
    );
  }
  if (item.link) attributes.push(['url', item.link.url], ['hits', item.link.hits]);
  writer.empty(item.type, attributes);
}

async function writeItems(writer: XmlWriter, items: ItemSource<Item>): Promise<void> {
  for await (const item of items) {
    writeItem(writer, item);
    const flushed = writer.flushIfFull();
    if (flushed) await flushed;
  }
}

async function writeListing(writer: XmlWriter, listing: Listing): Promise<void> {
  writer.start('result', [...OK, ['count', listing.count], ['truncated', listing.truncated ? 1 : undefined]]);
  if (listing.path) {
    writer.start('path', [['value', listing.path.value]]);
    for (const dir of listing.path.dirs) writer.empty('dir', [['id', dir.id], ['name', dir.name]]);
    writer.end();
  }
  await writeItems(writer, listing.folders);
  await writeItems(writer, listing.files);
  writer.end();
}

/** The item, then `<email to time status error/>` per recipient (DECISIONS.md §10). */
async function writeEmailShareInfo(writer: XmlWriter, info: EmailShareInfo): Promise<void> {
  writer.start('result', [...OK, ['count', info.count]]);
  writeItem(writer, info.item);
  for await (const email of info.emails) {
    writer.empty('email', [
      ['to', email.to],
      ['time', isoTime(email.time)],
      ['status', email.status],
      ['error', email.error],
    ]);
    const flushed = writer.flushIfFull();
    if (flushed) await flushed;
  }
  writer.end();
}
