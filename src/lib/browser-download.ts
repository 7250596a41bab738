/**
 * Hands a download URL to the browser: the service answers it with Content-Disposition:
 * attachment, so the page stays where it is. One place for the owner's downloads
 * (FileDownload) and a visitor's (ShareDownload).
 */
export function startBrowserDownload(url: string): void {
  const anchor = document.createElement('a');
  anchor.href = url;
  anchor.download = '';
  anchor.rel = 'noopener';
  anchor.hidden = true;
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
}
