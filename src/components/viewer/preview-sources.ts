/**
 * Where the viewer's URLs come from: the owner's FilePreview (a locked file asks for its password
 * first) and a visitor's SharePreview, after which (once the viewer closes) ShareOpen is read again, as a preview of a
 * video, audio, PDF or text file counts one download of the share's limit (docs/sharing.md).
 */
import { useQueryClient } from '@tanstack/react-query';
import { useMemo } from 'react';
import { api } from '../../api/client';
import { withUnlock } from '../../api/encryption';
import type { FileItem } from '../../api/results';
import { visitorShareKeys } from '../../api/share-service';
import { useI18n } from '../../i18n';
import { notify } from '../../lib/notices';
import { useUploads } from '../../uploads/use-uploads';
import { describeError } from '../error-text';
import type { PreviewSource } from './viewer';

export function useOwnerPreviewSource(folder?: string): PreviewSource {
  const { t } = useI18n();
  const { downloadFile } = useUploads();
  return useMemo(
    () => ({
      folder,
      url: async (file) => (await withUnlock(() => api.filePreview({ fid: file.id })))?.url,
      download: (file) => void downloadFile(file.id).catch((error: unknown) => notify('error', `${t.download}: ${file.name}`, describeError(error, t).message)),
    }),
    [folder, downloadFile, t],
  );
}

export function useSharePreviewSource(code: string, downpwd: string, download: (file: FileItem) => void): PreviewSource {
  const client = useQueryClient();
  return useMemo(
    () => ({
      url: async (file) => (await api.sharePreview({ code, downpwd, fid: file.id })).url,
      download,
      // Not while the viewer is open: a share that has just reached its limit would take its place.
      closed: () => void client.invalidateQueries({ queryKey: visitorShareKeys.opens(code) }),
    }),
    [code, downpwd, download, client],
  );
}
