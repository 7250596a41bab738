/** Copying direct links, and saying how it went: "Link copied.", or how to copy it by hand. */
import type { Messages } from '../../i18n';
import { copyText } from '../../lib/clipboard';
import { describeError } from '../error-text';
import { notify } from '../../lib/notices';

/** Safari allows clipboard writes only during the click: a ClipboardItem takes the text as a promise. False where unsupported or refused. */
async function copyPromised(text: Promise<string>): Promise<boolean> {
  if (typeof ClipboardItem === 'undefined' || !navigator.clipboard?.write) return false;
  try {
    await navigator.clipboard.write([new ClipboardItem({ 'text/plain': text.then((value) => new Blob([value], { type: 'text/plain' })) })]);
    return true;
  } catch {
    return false;
  }
}

/** When the browser will not copy, `field` is selected for copying by hand; the user is told either way. */
export async function copyLinks(
  t: Messages,
  urls: readonly string[] | Promise<readonly string[]>,
  field?: HTMLInputElement | null,
): Promise<boolean> {
  const list = Promise.resolve(urls);
  const text = list.then((values) => values.join('\n'));
  try {
    const copied = ('then' in urls && (await copyPromised(text))) || (await copyText(await text, field)) === 'copied';
    if (copied) {
      notify('info', t.linksCopied((await list).length));
      return true;
    }
    notify('error', t.linksCopyFailed);
  } catch (error) {
    notify('error', t.linksCopyFailed, describeError(error, t).message);
  }
  return false;
}
