import { Icon } from '../ui/icons';

const frame =
  'inline-flex items-center justify-center gap-2 rounded-md border border-gray-300 bg-white text-sm font-medium transition-colors hover:bg-gray-100 ' +
  'focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 dark:border-gray-600 dark:bg-gray-800 dark:hover:bg-gray-700';

/** A secondary button that is only an icon (the rows of the links view). */
export const iconButtonClass = `${frame} p-1.5`;

/** A real link in a new tab (the service answers a download), with no referrer and no opener: the link is a public address of its own. */
export function LinkOpenAnchor({
  url,
  label,
  name,
  iconOnly = false,
}: {
  readonly url: string;
  readonly label: string;
  /** A fuller accessible name, when several links are on screen ("Open the link to report.txt"). */
  readonly name?: string;
  /** Phones: the icon, with the label for screen readers. */
  readonly iconOnly?: boolean;
}) {
  return (
    <a
      href={url}
      target="_blank"
      rel="noopener noreferrer"
      aria-label={name}
      title={iconOnly ? (name ?? label) : undefined}
      className={`${frame} ${iconOnly ? 'p-1.5' : 'px-2.5 py-1.5'} text-gray-900 dark:text-gray-100`}
    >
      <Icon name="openExternal" className="size-4" />
      <span className={iconOnly ? 'sr-only' : ''}>{label}</span>
    </a>
  );
}
