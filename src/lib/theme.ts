/** The system's theme by default (in CSS, before any script runs), or the user's, stored and applied as a class on <html>. */
import { useSyncExternalStore } from 'react';
import { createListeners } from './listeners';

export const THEMES = ['system', 'light', 'dark'] as const;
export type Theme = (typeof THEMES)[number];

const STORAGE_KEY = 'fss.theme';
const isTheme = (value: unknown): value is Theme => THEMES.includes(value as Theme);

function stored(): Theme {
  try {
    const value = globalThis.localStorage?.getItem(STORAGE_KEY);
    return isTheme(value) ? value : 'system';
  } catch {
    return 'system';
  }
}

let current: Theme = stored();
const { subscribe, emit } = createListeners();

/** Puts the theme on <html>: class "dark" or "light" for a choice, neither for the system's. */
function apply(theme: Theme) {
  if (typeof document === 'undefined') return;
  const root = document.documentElement;
  root.classList.toggle('dark', theme === 'dark');
  root.classList.toggle('light', theme === 'light');
  root.style.colorScheme = theme === 'system' ? '' : theme;
}
apply(current);

export function getTheme(): Theme {
  return current;
}

export function setTheme(theme: Theme): void {
  try {
    if (theme === 'system') globalThis.localStorage?.removeItem(STORAGE_KEY);
    else globalThis.localStorage?.setItem(STORAGE_KEY, theme);
  } catch {
    // storage unavailable: the choice lasts for this page
  }
  if (theme === current) return;
  current = theme;
  apply(theme);
  emit();
}

export function useTheme(): Theme {
  return useSyncExternalStore(subscribe, getTheme, getTheme);
}
