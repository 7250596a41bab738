/** A tiny typed dictionary per language (no library), from the browser's languages unless the user picked one. */
import { createPreference } from '../lib/listeners';
import { en } from './en';
import type { Messages } from './messages';
import { zhCN } from './zh-cn';

export type { Messages } from './messages';

export const LANGUAGES = ['en', 'zh-CN'] as const;
export type Language = (typeof LANGUAGES)[number];

const dictionaries: Readonly<Record<Language, Messages>> = { en, 'zh-CN': zhCN };

export const isLanguage = (value: unknown): value is Language => LANGUAGES.includes(value as Language);

/** The first of the browser's languages that the app speaks: any Chinese is zh-CN, any English en. */
export function languageFromBrowser(preferred: readonly string[]): Language {
  for (const tag of preferred) {
    const lower = tag.toLowerCase();
    if (lower === 'zh' || lower.startsWith('zh-')) return 'zh-CN';
    if (lower === 'en' || lower.startsWith('en-')) return 'en';
  }
  return 'en';
}

function browserLanguages(): readonly string[] {
  if (typeof navigator === 'undefined') return [];
  return navigator.languages?.length ? navigator.languages : [navigator.language];
}

const language = createPreference('fss.language', isLanguage, () => languageFromBrowser(browserLanguages()), (value) => {
  if (typeof document !== 'undefined') document.documentElement.lang = value;
});
export const getLanguage = language.get;
export const setLanguage = language.set;

export function messagesFor(language: Language): Messages {
  return dictionaries[language];
}

export interface I18n {
  readonly t: Messages;
  readonly language: Language;
}

export function useI18n(): I18n {
  const current = language.use();
  return { t: dictionaries[current], language: current };
}
