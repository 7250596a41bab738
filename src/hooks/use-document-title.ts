import { useEffect } from 'react';
import { useI18n } from '../i18n';

/** Sets the tab's title to "<title> · Files" (in the app's language) while the page is shown. */
export function useDocumentTitle(title: string) {
  const { t } = useI18n();
  useEffect(() => {
    document.title = title ? `${title} · ${t.appName}` : t.appName;
  }, [title, t]);
}
