/** The direct-link menu entries (Create/Show, Copy, Remove link) as the selection calls for them, and their dialogs; folders cannot be linked. */
import { useQueryClient } from '@tanstack/react-query';
import { useMemo } from 'react';
import { ApiError } from '../../api/errors';
import { currentLinkUrls, linkSummary } from '../../api/links';
import type { FileItem } from '../../api/results';
import type { SelectionControls } from '../../hooks/use-selection';
import { useI18n } from '../../i18n';
import type { MenuAction } from '../ui/menu';
import { copyLinks } from './copy-links';
import type { LinkDialogMode } from './link-dialog';

export type LinkDialogRequest =
  | { readonly kind: 'link'; readonly files: readonly FileItem[]; readonly mode: LinkDialogMode; readonly foldersLeftOut: number }
  | { readonly kind: 'unlink'; readonly files: readonly FileItem[] };

export function useLinkMenu(controls: SelectionControls, open: (request: LinkDialogRequest) => void): MenuAction[] {
  const { t } = useI18n();
  const client = useQueryClient();
  const { selection, list, selectedItems } = controls;
  // Once per selection (selectedItems reads the current list; it is stable).
  const summary = useMemo(() => linkSummary(selectedItems()), [selection, list, selectedItems]);
  const selectedFiles = () => selectedItems().filter((item): item is FileItem => item.type === 'file');
  const allLinked = summary.files > 0 && summary.linked === summary.files;

  const copy = () => {
    const files = selectedFiles();
    // Looked up after the click, yet handed to the clipboard within it (see lib/clipboard.ts).
    const urls = currentLinkUrls(
      client,
      files.map((file) => file.id),
    ).then((found) => {
      const list = files.flatMap((file) => found.get(file.id) ?? []);
      if (list.length === 0) throw new ApiError('NotFound', t.linksGone);
      return list;
    });
    void copyLinks(t, urls).then((copied) => {
      // Not copied: the dialog shows the links to copy by hand (or says that they are gone).
      if (!copied) open({ kind: 'link', files, mode: 'show', foldersLeftOut: 0 });
    });
  };

  const actions: MenuAction[] = [
    {
      id: 'link',
      label: allLinked ? t.linksShow(summary.linked) : t.linksCreate,
      icon: 'directLink',
      disabled: summary.files === 0,
      hint: summary.files === 0 && summary.folders > 0 ? t.linksFoldersCannot : undefined,
      onSelect: () => {
        const files = selectedFiles();
        if (files.length > 0) open({ kind: 'link', files, mode: allLinked ? 'show' : 'create', foldersLeftOut: summary.folders });
      },
    },
  ];
  if (allLinked) actions.push({ id: 'copy-link', label: t.linksCopy(summary.linked), icon: 'copyText', onSelect: copy });
  if (summary.linked > 0) {
    actions.push({
      id: 'remove-link',
      label: t.linksRemove(summary.linked),
      icon: 'directUnlink',
      onSelect: () => open({ kind: 'unlink', files: selectedFiles().filter((file) => file.linked) }),
    });
  }
  return actions;
}
