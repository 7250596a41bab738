/** The system's theme by default (in CSS, before any script runs), or the user's, stored and applied as a class on <html>. */
import { createPreference } from './listeners';

const THEMES = ['system', 'light', 'dark'] as const;
export type Theme = (typeof THEMES)[number];

/** Puts the theme on <html>: class "dark" or "light" for a choice, neither for the system's. */
function apply(theme: Theme) {
  if (typeof document === 'undefined') return;
  const root = document.documentElement;
  root.classList.toggle('dark', theme === 'dark');
  root.classList.toggle('light', theme === 'light');
  root.style.colorScheme = theme === 'system' ? '' : theme;
}

const theme = createPreference('fss.theme', (value): value is Theme => THEMES.includes(value as Theme), () => 'system', apply, (value) => value !== 'system');

export const setTheme = theme.set;
export const useTheme = theme.use;
