import { describe, expect, it } from 'vitest';
import { en } from './en';
import { languageFromBrowser, messagesFor } from './index';
import { zhCN } from './zh-cn';

describe('languages', () => {
  it('the first of the browser languages the app speaks decides; any Chinese is Simplified Chinese', () => {
    expect(languageFromBrowser(['zh-CN', 'en-US'])).toBe('zh-CN');
    expect(languageFromBrowser(['zh-TW'])).toBe('zh-CN');
    expect(languageFromBrowser(['fr-FR', 'en-GB', 'zh'])).toBe('en');
    expect(languageFromBrowser(['de-DE'])).toBe('en');
    expect(languageFromBrowser([])).toBe('en');
  });

  it('both dictionaries have the same messages, none empty', () => {
    expect(Object.keys(zhCN).sort()).toEqual(Object.keys(en).sort());
    for (const dictionary of [en, zhCN]) {
      for (const [key, message] of Object.entries(dictionary)) {
        const text = typeof message === 'function' ? (message as (...args: unknown[]) => string)('2', '3') : message;
        if (key !== 'durationJoin') expect(text.trim().length, key).toBeGreaterThan(0);
      }
    }
  });

  it('messages take their parameters', () => {
    expect(messagesFor('en').itemCounts(1, 3)).toBe('1 folder, 3 files');
    expect(messagesFor('zh-CN').itemCounts(1, 3)).toBe('1 个文件夹，3 个文件');
    expect(messagesFor('en').deleteExplain(30)).toContain('30 days');
    expect(messagesFor('zh-CN').deleteExplain(7)).toContain('7 天');
  });
});
