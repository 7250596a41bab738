/** Result documents (DECISIONS.md §2), one writer for SOAP (inside <OpResult>) and HTTP GET/POST (a whole document). */
import type { OperationSpec } from '../../catalog/operations';
import { isBatched, type EmailShareInfo, type Item, type ItemSource, type Listing, type OpResult } from '../../operations/context';
import type { OpError } from '../../operations/errors';
import { formatAttribute, formatAttributes, type Attributes, type XmlWriter } from './xml-writer';

/** How a call ended: a result, a refusal (layer 2), or an unexpected failure logged as an incident (layer 3). */
export type Outcome =
  | { readonly kind: 'result'; readonly result: OpResult }
  | { readonly kind: 'refusal'; readonly refusal: OpError }
  | { readonly kind: 'incident'; readonly incident: string };

export type Answered = Exclude<Outcome, { kind: 'incident' }>;

const DAY_MS = 86_400_000;

/** `YYYY-MM-DDT` by day number (days since 1970-01-01): a listing's 100,000 times fall on few days. */
const dayPrefixes = new Map<number, string>();
const DAY_PREFIXES_KEPT = 1_024;
const TWO_DIGITS = Array.from({ length: 60 }, (_, n) => String(n).padStart(2, '0'));

/**
 * ISO 8601 UTC to the second (toISOString without milliseconds; RangeError on an invalid date). The date part is
 * computed once per day, the time of day by arithmetic: a listing writes a time per item.
 */
export function isoTime(date: Date): string {
  const ms = date.getTime();
  // Floor, not truncation: before 1970 the second containing the instant (…:59.999 is :59).
  const day = Math.floor(ms / DAY_MS);
  let prefix = dayPrefixes.get(day);
  if (prefix === undefined) {
    const iso = date.toISOString();
    prefix = iso.slice(0, iso.indexOf('T') + 1);
    if (dayPrefixes.size >= DAY_PREFIXES_KEPT) dayPrefixes.clear();
    dayPrefixes.set(day, prefix);
  }
  const second = Math.floor((ms - day * DAY_MS) / 1000);
  return `${prefix}${TWO_DIGITS[Math.floor(second / 3600)]}:${TWO_DIGITS[Math.floor(second / 60) % 60]}:${TWO_DIGITS[second % 60]}Z`;
}

function refusalAttributes(refusal: OpError): Attributes {
  return [['code', refusal.code], ['msg', refusal.message], ['reason', refusal.reason], ...Object.entries(refusal.details)];
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
    case 'account':
      writer.start('result', OK);
      writer.empty('account', [
        ['name', result.account.name],
        ['used', result.account.used],
        ['quota', result.account.quota],
      ]);
      writer.end();
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
  writer.emptyFormatted(item.type, itemAttributes(item));
}

/** An item's attributes as one string (a listing writes 100,000 items); an undefined value leaves its attribute out. */
function itemAttributes(item: Item): string {
  const file = item.type === 'file';
  let out = formatAttribute('id', item.id) + formatAttribute('dir', item.dir) + formatAttribute('name', item.name);
  if (file) out += formatAttribute('ext', item.ext);
  out += formatAttribute('size', item.size);
  if (file) out += formatAttribute('hash', item.hash);
  // isoTime writes digits, '-', ':', 'T', 'Z' and '+' only: nothing to escape.
  out += ` time="${isoTime(item.time)}"`;
  out += formatAttribute('shared', item.shared) + formatAttribute('linked', item.linked) + formatAttribute('encrypted', item.encrypted);
  if (item.encrypted) out += formatAttribute('tip', item.tip ?? '');
  if (!file) out += formatAttribute('progress', item.progress);
  out += formatAttribute('path', item.path);
  if (item.bin) {
    out += formatAttributes([
      ['deleted', isoTime(item.bin.deleted)],
      ['from', item.bin.from],
      ['purge', isoTime(item.bin.purge)],
    ]);
  }
  // §2 names both a share's and a link's address `url`: an item carries one listing's attributes only.
  if (item.share && item.link) throw new Error(`item ${item.id} carries both share and link attributes`);
  if (item.share) {
    const share = item.share;
    out += formatAttributes([
      ['code', share.code],
      ['url', share.url],
      ['downpwd', share.downpwd],
      ['downValue', share.downValue],
      ['downloads', share.downloads],
      ['description', share.description],
      ['image', share.image],
    ]);
  }
  if (item.link) out += formatAttributes([['url', item.link.url], ['hits', item.link.hits]]);
  return out;
}

/** Writes the items, flushing every 32 KiB and awaiting only where the database or the client makes one wait. */
async function writeItems(writer: XmlWriter, items: ItemSource<Item>): Promise<void> {
  if (isBatched(items)) {
    for await (const batch of items.batches()) await writeEach(writer, batch);
  } else if (Symbol.iterator in items) {
    await writeEach(writer, items);
  } else {
    for await (const item of items) {
      writeItem(writer, item);
      const flushed = writer.flushIfFull();
      if (flushed) await flushed;
    }
  }
}

async function writeEach(writer: XmlWriter, items: Iterable<Item>): Promise<void> {
  for (const item of items) {
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
