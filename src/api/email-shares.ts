/** E-mail sharing (docs/protocol.md §16). Sending also shares the item, so it invalidates the history, the shares and the listings. */
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { pollInterval } from '../lib/email-deliveries';
import { recipientsParam } from '../lib/email-addresses';
import { api } from './client';
import { invalidateFiles } from './files';
import type { EmailShareInfo, Item } from './results';
import { shareKeys } from './shares';

/** The item whose e-mail share is meant: folders and files have separate ids. */
export interface EmailShareTarget {
  readonly type: Item['type'];
  readonly id: number;
}

export const emailShareKeys = {
  all: ['email-shares'] as const,
  info: (target: EmailShareTarget) => [...emailShareKeys.all, target.type, target.id] as const,
};

export const emailShareQueries = {
  /** The item and its messages, oldest first; polled while any message is queued or being retried. */
  info: (target: EmailShareTarget) =>
    queryOptions({
      queryKey: emailShareKeys.info(target),
      queryFn: ({ signal }): Promise<EmailShareInfo> =>
        target.type === 'folder'
          ? api.getFolderEmailShareInfo({ dirid: target.id }, { signal })
          : api.getFileEmailShareInfo({ fid: target.id }, { signal }),
      refetchInterval: (query) => pollInterval(query.state.data?.emails),
    }),
};

export function useEmailShareInfo(target: EmailShareTarget) {
  return useQuery(emailShareQueries.info(target));
}

/** One message per recipient, queued when the call succeeds; the history is then polled until every message is final. */
export function useSendEmailShare(target: EmailShareTarget) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (recipients: readonly string[]) => {
      const to = recipientsParam(recipients);
      return target.type === 'folder' ? api.folderEmailShare({ dirid: target.id, to }) : api.fileEmailShare({ fid: target.id, to });
    },
    onSuccess: () => {
      // Not awaited: the item may just have been shared, and a big listing need not keep the dialog busy.
      void client.invalidateQueries({ queryKey: shareKeys.all });
      void invalidateFiles(client);
      // Awaited: the dialog shows the new messages (queued) as soon as it says they were accepted.
      return client.invalidateQueries({ queryKey: emailShareKeys.info(target) });
    },
  });
}
