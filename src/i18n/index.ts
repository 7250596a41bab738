/** A tiny typed dictionary per language (no library), from the browser's languages unless the user picked one. */
import { useSyncExternalStore } from 'react';
import { createListeners } from '../lib/listeners';
import { en } from './en';
import type { Messages } from './messages';
import { zhCN } from './zh-cn';

export type { Messages } from './messages';

export const LANGUAGES = ['en', 'zh-CN'] as const;
export type Language = (typeof LANGUAGES)[number];

const dictionaries: Readonly<Record<Language, Messages>> = { en, 'zh-CN': zhCN };
const STORAGE_KEY = 'fss.language';

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

function stored(): Language | undefined {
  try {
    const value = globalThis.localStorage?.getItem(STORAGE_KEY);
    return isLanguage(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function browserLanguages(): readonly string[] {
  if (typeof navigator === 'undefined') return [];
  return navigator.languages?.length ? navigator.languages : [navigator.language];
}

let current: Language = stored() ?? languageFromBrowser(browserLanguages());
const { subscribe, emit } = createListeners();

function apply(language: Language) {
  if (typeof document !== 'undefined') document.documentElement.lang = language;
}
apply(current);

export function getLanguage(): Language {
  return current;
}

export function setLanguage(language: Language): void {
  try {
    globalThis.localStorage?.setItem(STORAGE_KEY, language);
  } catch {
    // storage unavailable: the choice lasts for this page
  }
  if (language === current) return;
  current = language;
  apply(language);
  emit();
}

export function messagesFor(language: Language): Messages {
  return dictionaries[language];
}

export interface I18n {
  readonly t: Messages;
  readonly language: Language;
}

export function useI18n(): I18n {
  const language = useSyncExternalStore(subscribe, getLanguage, getLanguage);
  return { t: dictionaries[language], language };
}
