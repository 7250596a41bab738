/** The e-mail an e-mail share's recipient gets, as text and HTML; every HTML value is escaped, the subject one line. */

export interface ShareMessageFacts {
  readonly sharerName: string;
  readonly itemType: 'folder' | 'file';
  readonly itemName: string;
  /** `${publicBase}/s/${code}` (shares.ts shareUrl). */
  readonly url: string;
  /** null for an open share. */
  readonly extractionCode: string | null;
  /** 'en' when not given. */
  readonly language?: MailLanguage;
}

export interface ShareMessage {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

/** Text safe inside HTML elements and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** One line for a header: control characters (line breaks above all) become spaces. */
function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').trim();
}

export const MAIL_LANGUAGES = ['en', 'zh-CN'] as const;
export type MailLanguage = (typeof MAIL_LANGUAGES)[number];

/** The language of an Accept-Language header that mails are written in: the most preferred of en and any Chinese; else en. */
export function mailLanguageOf(acceptLanguage: string | undefined): MailLanguage {
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((part, index) => {
      const [tag, ...params] = part.trim().toLowerCase().split(';');
      const q = params.map((p) => /^\s*q=([01](\.\d{0,3})?)\s*$/.exec(p)).find(Boolean);
      return { tag: tag.trim(), q: q ? Number(q[1]) : 1, index };
    })
    .filter(({ q }) => q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { tag } of ranked) {
    if (tag === 'zh' || tag.startsWith('zh-')) return 'zh-CN';
    if (tag === 'en' || tag.startsWith('en-')) return 'en';
  }
  return 'en';
}

/** The words of a share e-mail in each language; names and URLs are put in by shareMessage. */
const WORDS = {
  en: {
    what: { folder: 'folder', file: 'file' },
    shared: (sharer: string, what: string, item: string) => `${sharer} shared the ${what} "${item}" with you`,
    sharedHtml: (sharer: string, what: string, item: string) => `<strong>${sharer}</strong> shared the ${what} <strong>${item}</strong> with you.`,
    openHere: 'Open it here: ',
    open: (what: string) => `Open the shared ${what}`,
    code: 'Extraction code: ',
    why: 'You received this message because someone entered your address when sharing. If you did not expect it, you can ignore it.',
    stop: '.',
  },
  'zh-CN': {
    what: { folder: '文件夹', file: '文件' },
    shared: (sharer: string, what: string, item: string) => `${sharer} 与你分享了${what}“${item}”`,
    sharedHtml: (sharer: string, what: string, item: string) => `<strong>${sharer}</strong> 与你分享了${what}<strong>${item}</strong>。`,
    openHere: '打开链接：',
    open: (what: string) => `打开分享的${what}`,
    code: '提取码：',
    why: '你收到这封邮件，是因为有人在分享时填写了你的邮箱地址。如果你没有预料到这封邮件，可以忽略它。',
    stop: '。',
  },
} as const;

export function shareMessage(facts: ShareMessageFacts): ShareMessage {
  const language = facts.language ?? 'en';
  const words = WORDS[language];
  const what = words.what[facts.itemType];
  const subject = oneLine(words.shared(facts.sharerName, what, facts.itemName));

  const text = [
    `${words.shared(facts.sharerName, what, facts.itemName)}${words.stop}`,
    '',
    `${words.openHere}${facts.url}`,
    ...(facts.extractionCode === null ? [] : [`${words.code}${facts.extractionCode}`]),
    '',
    words.why,
    '',
  ].join('\n');

  const href = escapeHtml(facts.url);
  const html = [
    '<!DOCTYPE html>',
    `<html lang="${language}"><head><meta charset="utf-8"><title>` + escapeHtml(subject) + '</title></head>',
    '<body style="font-family: sans-serif; line-height: 1.5">',
    `<p>${words.sharedHtml(escapeHtml(facts.sharerName), what, escapeHtml(facts.itemName))}</p>`,
    `<p><a href="${href}">${words.open(what)}</a><br>${href}</p>`,
    ...(facts.extractionCode === null
      ? []
      : [`<p>${words.code}<code style="font-size: 1.2em">${escapeHtml(facts.extractionCode)}</code></p>`]),
    `<p style="color: #666; font-size: 0.9em">${words.why}</p>`,
    '</body></html>',
    '',
  ].join('\n');

  return { subject, text, html };
}
