/**
 * Copying text to the clipboard, for any feature that hands out links. The Clipboard API first;
 * where it is missing or refused (an insecure origin, a browser policy), the old way: the text is
 * selected in a field and copied with execCommand. If even that fails, the text stays selected
 * in the visible field so that the user can press Ctrl+C (⌘C) themselves.
 */

export type CopyResult = 'copied' | 'selected';

/**
 * Copies `text`. `field`, when given, is a visible field that shows the same text: the fallback
 * selects it (and leaves it selected if copying fails). Without one, a hidden field is placed
 * inside the open modal dialog (the page behind it is inert and cannot take focus) or the body.
 */
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
