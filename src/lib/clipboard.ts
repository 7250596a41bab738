/** The Clipboard API, else execCommand on a selected field; if both fail, the text stays selected for Ctrl+C. */

export type CopyResult = 'copied' | 'selected';

/** A hidden field goes inside the open modal dialog when there is one: the page behind is inert and cannot take focus. */
export async function copyText(text: string, field?: HTMLInputElement | HTMLTextAreaElement | null): Promise<CopyResult> {
  try {
    if (navigator.clipboard?.writeText) {
      await navigator.clipboard.writeText(text);
      return 'copied';
    }
  } catch {
    // Refused: fall back below.
  }
  if (field && field.value === text) {
    field.focus();
    field.select();
    return execCopy() ? 'copied' : 'selected';
  }
  const host = document.activeElement?.closest('dialog[open]') ?? document.body;
  const hidden = document.createElement('textarea');
  hidden.value = text;
  hidden.setAttribute('readonly', '');
  hidden.setAttribute('aria-hidden', 'true');
  hidden.style.cssText = 'position:fixed;top:0;left:0;width:1px;height:1px;opacity:0;';
  const previous = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  host.append(hidden);
  hidden.select();
  const copied = execCopy();
  hidden.remove();
  previous?.focus();
  // Nothing visible to leave selected: report it as copied only if it was.
  return copied ? 'copied' : 'selected';
}

function execCopy(): boolean {
  try {
    return document.execCommand('copy');
  } catch {
    return false;
  }
}
