// E-mail share recipients, by the service's rule (addressProblem, docs/protocol.md §16.1), so the dialog refuses what the service would.
// The field accepts more separators than the service; what is sent is always plain addresses joined by commas.

/** The service's default of FSS_MAX_EMAIL_RECIPIENTS: distinct addresses in one call. */
export const MAX_EMAIL_RECIPIENTS = 20;

/** Why an address is refused; the dialog words each one (i18n emailProblem*). */
export type AddressProblem =
  | 'control'
  | 'too-long'
  | 'no-at'
  | 'no-local'
  | 'no-domain'
  | 'local-too-long'
  | 'local-characters'
  | 'domain'
  | 'domain-no-dot';

// The service's limits and patterns, character for character.
const MAX_ADDRESS_LENGTH = 254;
const MAX_LOCAL_LENGTH = 64;
const MAX_LABEL_LENGTH = 63;
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const DOMAIN_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/;
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
/** Only letters, digits, dots and hyphens: the URL parser would stop at / ? # \ or decode %xx, and so check another domain. */
const ASCII_OUTSIDE_DOMAIN = /[^\x80-\u{10ffff}A-Za-z0-9.-]/u;

/** Punycode, '' when invalid; the browser's URL parser applies the same UTS #46 mapping as node's domainToASCII. */
function domainToAscii(domain: string): string {
  if (/^[\x00-\x7f]*$/.test(domain)) return domain;
  if (ASCII_OUTSIDE_DOMAIN.test(domain)) return '';
  try {
    return new URL(`http://${domain}/`).hostname;
  } catch {
    return '';
  }
}

/** Why `address` is not one the service sends to, or null when it is one. */
export function addressProblem(address: string): AddressProblem | null {
  if (CONTROL.test(address)) return 'control';
  if (address.length > MAX_ADDRESS_LENGTH) return 'too-long';
  const at = address.lastIndexOf('@');
  if (at < 0) return 'no-at';
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  if (local === '') return 'no-local';
  if (domain === '') return 'no-domain';
  if (local.length > MAX_LOCAL_LENGTH) return 'local-too-long';
  if (!LOCAL_PART.test(local)) return 'local-characters';
  const ascii = domainToAscii(domain);
  if (ascii === '' || ascii.length > MAX_ADDRESS_LENGTH) return 'domain';
  const labels = ascii.split('.');
  if (labels.length < 2) return 'domain-no-dot';
  if (labels.some((label) => label.length > MAX_LABEL_LENGTH || !DOMAIN_LABEL.test(label))) return 'domain';
  if (/^[0-9]+$/.test(labels.at(-1)!)) return 'domain';
  return null;
}

/** The service compares addresses case-insensitively over the whole address. */
export const addressKey = (address: string) => address.toLowerCase();

/** Splits on `separator` outside double quotes (a quoted display name may hold a comma). */
function splitOutsideQuotes(text: string, separator: RegExp): string[] {
  const entries: string[] = [];
  let current = '';
  let quoted = false;
  for (const char of text) {
    if (char === '"') quoted = !quoted;
    if (!quoted && separator.test(char)) {
      entries.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  entries.push(current);
  return entries;
}

const withoutMailto = (address: string) => address.replace(/^mailto:/i, '');

/** Split on `,` `;` or line breaks, `Name <address>` as its address, other entries on spaces; nothing checked here. */
export function splitAddressList(text: string): string[] {
  const addresses: string[] = [];
  for (const entry of splitOutsideQuotes(text, /[,;\r\n]/)) {
    const angle = /<([^<>]*)>\s*$/.exec(entry);
    if (angle) {
      const address = withoutMailto(angle[1].trim());
      if (address) addresses.push(address);
      continue;
    }
    for (const word of entry.split(/\s+/)) if (word) addresses.push(withoutMailto(word));
  }
  return addresses;
}

/** Does `text` hold a separator, so that it is a list rather than one address being typed? */
export const hasSeparator = (text: string) => /[,;\s]/.test(text);

export interface InvalidAddress {
  readonly address: string;
  readonly problem: AddressProblem;
}

export interface RecipientsUpdate {
  /** The recipients after the update: distinct, valid, at most `limit`, in the order added. */
  readonly recipients: readonly string[];
  readonly added: readonly string[];
  /** Addresses that were recipients already (in some spelling): merged, not added. */
  readonly duplicates: readonly string[];
  /** Refused addresses: they stay in the field to be corrected. */
  readonly invalid: readonly InvalidAddress[];
  /** Valid addresses beyond the limit: they stay in the field too. */
  readonly overflow: readonly string[];
  /** What stays in the field: the refused and the overflowing addresses, comma-separated. */
  readonly draft: string;
}

/** Valid new addresses become recipients (up to `limit`, first spelling kept); the rest stays as the field's text, so nothing typed is lost. */
export function addRecipients(recipients: readonly string[], text: string, limit = MAX_EMAIL_RECIPIENTS): RecipientsUpdate {
  const next = [...recipients];
  const keys = new Set(recipients.map(addressKey));
  const added: string[] = [];
  const duplicates: string[] = [];
  const invalid: InvalidAddress[] = [];
  const overflow: string[] = [];
  const kept: string[] = [];
  for (const address of splitAddressList(text)) {
    const problem = addressProblem(address);
    if (problem) {
      invalid.push({ address, problem });
      kept.push(address);
    } else if (keys.has(addressKey(address))) {
      duplicates.push(address);
    } else if (next.length >= limit) {
      overflow.push(address);
      kept.push(address);
    } else {
      keys.add(addressKey(address));
      next.push(address);
      added.push(address);
    }
  }
  return { recipients: next, added, duplicates, invalid, overflow, draft: kept.join(', ') };
}

/** The first refused address of the field's text, checked as it is typed; null when there is none. */
export function firstInvalidAddress(text: string): InvalidAddress | null {
  for (const address of splitAddressList(text)) {
    const problem = addressProblem(address);
    if (problem) return { address, problem };
  }
  return null;
}

/** The `to` parameter of FolderEmailShare / FileEmailShare. */
export const recipientsParam = (recipients: readonly string[]) => recipients.join(',');
