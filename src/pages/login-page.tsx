import { useId, useRef, useState, type FormEvent } from 'react';
import { Navigate, useLocation, useNavigate } from 'react-router';
import { useLogin } from '../api/auth';
import { isApiError } from '../api/errors';
import type { LoginState } from '../components/require-auth';
import { Button } from '../components/ui/button';
import { TextField } from '../components/ui/field';
import { useDocumentTitle } from '../hooks/use-document-title';
import { useSession } from '../hooks/use-session';
import { Preferences } from '../components/app-header';
import { useI18n, type Messages } from '../i18n';
import { describeError, durationText } from '../components/error-text';

/** Where to go after logging in: back where the user came from, never to /login itself. */
function returnPath(state: LoginState | null): string {
  const from = state?.from;
  if (!from || from.pathname === '/login') return '/';
  return `${from.pathname}${from.search}${from.hash}`;
}

function loginErrorText(error: unknown, t: Messages): string {
  if (isApiError(error, 'LoginRefused')) {
    if (error.details.reason === 'throttled') {
      return error.retryAfter ? t.throttledFor(durationText(error.retryAfter, t)) : t.throttled;
    }
    return t.wrongCredentials;
  }
  const { title, message } = describeError(error, t);
  return t.errorTitle(title, message);
}

export function LoginPage() {
  const { t } = useI18n();
  useDocumentTitle(t.logIn);
  const current = useSession();
  const location = useLocation();
  const navigate = useNavigate();
  const state = (location.state ?? null) as LoginState | null;
  const login = useLogin();
  const [account, setAccount] = useState('');
  const [password, setPassword] = useState('');
  const [remember, setRemember] = useState(false);
  const passwordRef = useRef<HTMLInputElement>(null);
  const errorId = useId();

  // Already logged in (e.g. the back button): nothing to do here.
  if (current && !login.isPending && !login.isSuccess) return <Navigate to={returnPath(state)} replace />;

  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (login.isPending) return;
    login.mutate(
      { account, password, remember },
      {
        // navigate's promise settles once the route has loaded; the router shows its own errors.
        onSuccess: () => void navigate(returnPath(state), { replace: true }),
        onError: (error) => {
          if (isApiError(error, 'LoginRefused')) {
            setPassword('');
            passwordRef.current?.focus();
          }
        },
      },
    );
  };

  const notice = state?.reason === 'expired' ? t.sessionEnded : state?.reason === 'logout' ? t.loggedOut : null;
  const error = login.isError ? loginErrorText(login.error, t) : null;

  return (
    <main className="flex min-h-dvh items-start justify-center px-4 py-12 sm:items-center">
      <div className="w-full max-w-sm">
        <div className="mb-6 flex justify-end">
          <Preferences />
        </div>
        <h1 className="text-2xl font-semibold">{t.loginHeading}</h1>
        {notice && !error && (
          <p role="status" className="mt-4 rounded-md bg-blue-50 p-3 text-sm text-blue-900 dark:bg-blue-950 dark:text-blue-100">
            {notice}
          </p>
        )}
        <form className="mt-6 space-y-4" onSubmit={onSubmit} aria-describedby={error ? errorId : undefined}>
          <TextField
            id="login-account"
            name="account"
            label={t.accountLabel}
            value={account}
            onChange={(event) => setAccount(event.target.value)}
            autoComplete="username"
            autoCapitalize="none"
            autoCorrect="off"
            spellCheck={false}
            required
            autoFocus
            aria-invalid={error ? true : undefined}
          />
          <TextField
            id="login-password"
            name="password"
            type="password"
            ref={passwordRef}
            label={t.passwordLabel}
            value={password}
            onChange={(event) => setPassword(event.target.value)}
            autoComplete="current-password"
            required
            aria-invalid={error ? true : undefined}
          />
          <div className="flex items-center gap-2">
            <input
              id="login-remember"
              type="checkbox"
              className="size-4 rounded border-gray-300 focus-visible:outline-2 focus-visible:outline-blue-600"
              checked={remember}
              onChange={(event) => setRemember(event.target.checked)}
            />
            <label htmlFor="login-remember" className="text-sm">
              {t.rememberLabel}
            </label>
          </div>
          {error && (
            <p
              id={errorId}
              role="alert"
              className="rounded-md border border-red-300 bg-red-50 p-3 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100"
            >
              {error}
            </p>
          )}
          <Button type="submit" className="w-full" busy={login.isPending} busyLabel={t.loggingIn}>
            {t.logIn}
          </Button>
        </form>
      </div>
    </main>
  );
}
