import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/errors';
import { RefusalReasons, ResultCodes, type ResultCodeName } from '../api/generated/operations';
import { messagesFor } from '../i18n';
import { describeError } from './error-text';

const HAN = /\p{Script=Han}/u;
const refusal = (code: number, reason?: string, details: Record<string, string | number> = {}) =>
  new ApiError((ResultCodes as Record<number, ResultCodeName>)[code], 'the service’s English words', reason ? { reason, ...details } : details, code);

describe('a refusal in the user’s language', () => {
  it('every reason of the service has its own English and Chinese text', () => {
    for (const language of ['en', 'zh-CN'] as const) {
      const t = messagesFor(language);
      const texts = RefusalReasons.map((reason) => t.refusalText(reason, ''));
      for (const [i, text] of texts.entries()) expect(text, `${language} ${RefusalReasons[i]}`).not.toBe('');
      if (language === 'zh-CN') for (const text of texts) expect(text).toMatch(HAN);
    }
  });

  it('a name conflict is told by its reason, in Chinese in zh-CN', () => {
    const taken = refusal(409, 'name-taken');
    expect(describeError(taken, messagesFor('zh-CN')).message).toBe('此处已有同名的项目。');
    expect(describeError(taken, messagesFor('en')).message).toBe('An item with this name already exists here.');
  });

  it('no refusal of any code shows the service’s English words in zh-CN, with a reason or without (a newer service)', () => {
    const zh = messagesFor('zh-CN');
    for (const code of Object.keys(ResultCodes).map(Number)) {
      for (const reason of [undefined, 'from-a-newer-service', ...RefusalReasons]) {
        const { title, message } = describeError(refusal(code, reason, { retryAfter: 60 }), zh);
        expect(`${title} ${message}`, `${code} ${reason}`).not.toContain('English');
        expect(message, `${code} ${reason}`).toMatch(HAN);
      }
    }
  });

  it('a locked item still gives its password hint; other 423s say why', () => {
    const en = messagesFor('en');
    expect(describeError(refusal(423, 'encrypted-locked', { tip: 'the horse' }), en).message).toContain('Password hint: the horse');
    expect(describeError(refusal(423, 'encrypted-excluded'), en).message).toContain('decrypt them first');
  });
});
