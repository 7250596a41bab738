/** Login and logout as mutations; the query cache follows the session (query-client.ts), so these need not touch it. */
import { useMutation } from '@tanstack/react-query';
import { api } from './client';
import { session } from './session';

export interface Credentials {
  /** Account name or numeric account id. */
  readonly account: string;
  readonly password: string;
  /** Keep the session across browser restarts (localStorage) rather than for this tab only. */
  readonly remember?: boolean;
}

/** Login; on success the session starts. Rejects with ApiError 'LoginRefused' on wrong credentials. */
export function useLogin() {
  return useMutation({
    mutationKey: ['auth', 'login'],
    mutationFn: async ({ account, password, remember }: Credentials) => {
      const name = account.trim();
      const issued = await api.login({ uid: name, pwd: password });
      session.set({ uid: issued.uid, token: issued.token, key: issued.key, expires: issued.expires, account: name }, { remember });
      return issued;
    },
  });
}

/** Revokes the token, then ends the session whatever the answer: an unreachable service must not keep the user logged in. */
export function useLogout() {
  return useMutation({
    mutationKey: ['auth', 'logout'],
    mutationFn: async () => {
      await api.logout().catch(() => undefined);
    },
    onSettled: () => session.clear(),
  });
}
