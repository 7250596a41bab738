import { useEffect } from 'react';

/** Sets the tab's title to "<title> · Files" while the page is shown. */
export function useDocumentTitle(title: string) {
  useEffect(() => {
    document.title = title ? `${title} · Files` : 'Files';
  }, [title]);
}
