/** The e-mail an e-mail share's recipient gets, as text and HTML; every HTML value is escaped, the subject one line. */

export interface ShareMessageFacts {
  readonly sharerName: string;
  readonly itemType: 'folder' | 'file';
  readonly itemName: string;
  /** `${publicBase}/s/${code}` (shares.ts shareUrl). */
  readonly url: string;
  /** null for an open share. */
  readonly extractionCode: string | null;
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

export function shareMessage(facts: ShareMessageFacts): ShareMessage {
  const what = facts.itemType === 'folder' ? 'folder' : 'file';
  const subject = oneLine(`${facts.sharerName} shared the ${what} "${facts.itemName}" with you`);

  const text = [
    `${facts.sharerName} shared the ${what} "${facts.itemName}" with you.`,
    '',
    `Open it here: ${facts.url}`,
    ...(facts.extractionCode === null ? [] : [`Extraction code: ${facts.extractionCode}`]),
    '',
    'You received this message because someone entered your address when sharing. If you did not expect it, you can ignore it.',
    '',
  ].join('\n');

  const name = escapeHtml(facts.sharerName);
  const item = escapeHtml(facts.itemName);
  const href = escapeHtml(facts.url);
  const html = [
    '<!DOCTYPE html>',
    '<html><head><meta charset="utf-8"><title>' + escapeHtml(subject) + '</title></head>',
    '<body style="font-family: sans-serif; line-height: 1.5">',
    `<p><strong>${name}</strong> shared the ${what} <strong>${item}</strong> with you.</p>`,
    `<p><a href="${href}">Open the shared ${what}</a><br>${href}</p>`,
    ...(facts.extractionCode === null
      ? []
      : [`<p>Extraction code: <code style="font-size: 1.2em">${escapeHtml(facts.extractionCode)}</code></p>`]),
    '<p style="color: #666; font-size: 0.9em">You received this message because someone entered your address when sharing. If you did not expect it, you can ignore it.</p>',
    '</body></html>',
    '',
  ].join('\n');

  return { subject, text, html };
}
