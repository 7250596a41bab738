import { describe, expect, it } from 'vitest';
import { ApiError } from '../../api/errors';
import { messagesFor } from '../../i18n';
import { linkErrorText } from './link-error';

describe('why a file got no link', () => {
  const en = messagesFor('en');

  it('an encrypted file (423) must be decrypted, and its password hint is given', () => {
    const locked = new ApiError('Locked', 'the file is encrypted: decrypt it to link it', { id: 4, tip: 'the horse' }, 423);
    expect(linkErrorText(locked, en, 'secret.txt')).toBe(
      '“secret.txt” is encrypted. Encrypted files cannot have a direct link. Decrypt the file first. Password hint: the horse',
    );
    const noTip = new ApiError('Locked', 'the file is in an encrypted folder: decrypt it to link it', { id: 9, tip: '' }, 423);
    expect(linkErrorText(noTip, en, 'a.txt')).toBe('“a.txt” is encrypted. Encrypted files cannot have a direct link. Decrypt the file first.');
    expect(linkErrorText(locked, messagesFor('zh-CN'), 'secret.txt')).toContain('请先解密该文件');
  });

  it('anything else is said as for any call, by its reason, never in the service’s words', () => {
    const missing = new ApiError('NotFound', 'file not found', { reason: 'file-not-found' }, 404);
    expect(linkErrorText(missing, en, 'gone.txt')).toBe('Not found. The file does not exist, or it is not yours.');
    const unexplained = new ApiError('NotFound', 'file not found', {}, 404);
    expect(linkErrorText(unexplained, en, 'gone.txt')).toBe('Not found. “gone.txt” does not exist, or it is not yours.');
  });
});
