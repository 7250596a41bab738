import { useEffect, useId, useRef, useState } from 'react';
import { Link, NavLink, useNavigate } from 'react-router';
import { useLogout } from '../api/auth';
import { useSession } from '../hooks/use-session';
import { LANGUAGES, isLanguage, messagesFor, setLanguage, useI18n } from '../i18n';
import { setTheme, useTheme, type Theme } from '../lib/theme';
import { QuotaMeter } from './quota-meter';
import { Button } from './ui/button';
import { selectClass } from './ui/field';
import { Icon, type IconName } from './ui/icons';

export function AppHeader() {
  const { t } = useI18n();
  const current = useSession();
  const logout = useLogout();
  // Ending the session is enough: RequireAuth then takes the user to /login.
  const onLogout = () => logout.mutate();

  return (
    <header className="border-b border-gray-200 bg-white dark:border-gray-800 dark:bg-gray-900">
      <div className="mx-auto flex max-w-6xl flex-wrap items-center gap-x-3 gap-y-1 px-3 pt-2 sm:px-6">
        <Link
          to="/"
          className="rounded text-lg font-semibold focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600"
        >
          {t.appName}
        </Link>
        {current && <HeaderSearch />}
        <div className="ml-auto flex min-w-0 items-center gap-1.5 sm:gap-2">
          <Preferences />
          {current && (
            <>
              <QuotaMeter />
              <p className="hidden min-w-0 truncate text-sm text-gray-700 sm:block dark:text-gray-300" title={current.account}>
                <span className="sr-only md:not-sr-only">{t.signedInAs}</span>
                <span className="font-medium text-gray-900 dark:text-gray-100" data-testid="account-name">
                  {current.account}
                </span>
              </p>
              <Button variant="secondary" compact onClick={onLogout} busy={logout.isPending} busyLabel={t.loggingOut} className="shrink-0">
                {t.logOut}
              </Button>
            </>
          )}
        </div>
      </div>
      <nav aria-label={t.mainNavigation} className="mx-auto max-w-6xl overflow-x-auto px-1 sm:px-4">
        <ul className="flex text-xs sm:gap-1 sm:text-sm">
          <NavItem to="/" icon="home" label={t.allFiles} short={t.allFilesShort} end />
          <NavItem to="/recent" icon="clock" label={t.recentUploads} short={t.recentUploadsShort} />
          <NavItem to="/search" icon="search" label={t.search} />
          <NavItem to="/shares" icon="share" label={t.sharingPageTitle} short={t.sharesShort} />
          <NavItem to="/links" icon="directLink" label={t.linksTitle} />
          <NavItem to="/bin" icon="bin" label={t.recycleBin} short={t.recycleBinShort} />
        </ul>
      </nav>
    </header>
  );
}

/** Search from any page: Enter goes to /search?q=…; "/" focuses the field unless the user is typing somewhere. */
function HeaderSearch() {
  const { t } = useI18n();
  const navigate = useNavigate();
  const [text, setText] = useState('');
  const field = useRef<HTMLInputElement>(null);
  const inputId = useId();

  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
      const target = event.target as HTMLElement | null;
      if (target?.closest('input, textarea, select, [contenteditable="true"], [role="dialog"]')) return;
      event.preventDefault();
      field.current?.focus();
    };
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, []);

  return (
    <form
      role="search"
      className="order-last w-full sm:order-none sm:w-56"
      onSubmit={(event) => {
        event.preventDefault();
        if (!text) return;
        void navigate(`/search?${new URLSearchParams({ q: text })}`);
        setText('');
        field.current?.blur();
      }}
    >
      <label htmlFor={inputId} className="sr-only">
        {t.headerSearchLabel}
      </label>
      <input
        ref={field}
        id={inputId}
        type="search"
        value={text}
        onChange={(event) => setText(event.target.value)}
        placeholder={t.headerSearchPlaceholder}
        autoComplete="off"
        spellCheck={false}
        enterKeyHint="search"
        className="block w-full rounded-md border border-gray-400 bg-white px-2 py-1 text-sm text-gray-900 focus-visible:border-blue-600 focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-gray-500 dark:bg-gray-800 dark:text-gray-100"
      />
    </form>
  );
}

/** On a phone, an icon over a short word; the link's name stays the full label, which contains it (WCAG 2.5.3). */
function NavItem({
  to,
  icon,
  label,
  short = label,
  end = false,
}: {
  readonly to: string;
  readonly icon: IconName;
  readonly label: string;
  readonly short?: string;
  readonly end?: boolean;
}) {
  return (
    <li className="min-w-0 flex-1 sm:flex-none sm:shrink-0">
      <NavLink
        to={to}
        end={end}
        aria-label={short === label ? undefined : label}
        title={label}
        className={({ isActive }) =>
          `flex flex-col items-center gap-0.5 border-b-2 px-0.5 py-1.5 whitespace-nowrap sm:flex-row sm:gap-1.5 sm:px-2 sm:py-2 focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-blue-600 ${
            isActive
              ? 'border-blue-600 font-medium text-blue-800 dark:border-blue-400 dark:text-blue-200'
              : 'border-transparent text-gray-700 hover:text-gray-900 dark:text-gray-300 dark:hover:text-gray-100'
          }`
        }
      >
        <Icon name={icon} className="size-5 sm:size-4" />
        <span className="max-w-full truncate sm:hidden">{short}</span>
        <span className="hidden sm:inline">{label}</span>
      </NavLink>
    </li>
  );
}

const NEXT_THEME: Readonly<Record<Theme, Theme>> = { system: 'light', light: 'dark', dark: 'system' };
const THEME_ICON: Readonly<Record<Theme, IconName>> = { system: 'monitor', light: 'sun', dark: 'moon' };

/** Theme (system → light → dark, one button) and language, remembered on this device. */
export function Preferences() {
  const { t, language } = useI18n();
  const theme = useTheme();
  const languageId = useId();
  const themeLabel: Record<Theme, string> = { system: t.themeSystem, light: t.themeLight, dark: t.themeDark };
  const themeName = `${t.theme}: ${themeLabel[theme]}`;
  return (
    <div className="flex items-center gap-1.5">
      <button
        type="button"
        onClick={() => setTheme(NEXT_THEME[theme])}
        title={themeName}
        className="rounded-md border border-gray-400 p-1.5 text-gray-800 hover:bg-gray-100 focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-gray-500 dark:text-gray-100 dark:hover:bg-gray-800"
      >
        <Icon name={THEME_ICON[theme]} className="size-4" />
        <span className="sr-only">{themeName}</span>
      </button>
      <label htmlFor={languageId} className="sr-only">
        {t.language}
      </label>
      <select
        id={languageId}
        value={language}
        onChange={(event) => {
          if (isLanguage(event.target.value)) setLanguage(event.target.value);
        }}
        className={selectClass}
      >
        {LANGUAGES.map((value) => (
          <option key={value} value={value} lang={value}>
            {messagesFor(value).languageName}
          </option>
        ))}
      </select>
    </div>
  );
}
