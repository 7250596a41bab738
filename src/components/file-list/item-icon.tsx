import type { Item } from '../../api/results';

/** A folder or file glyph; decorative (the row says what the item is in words). */
export function ItemIcon({ item }: { readonly item: Item }) {
  return (
    <svg aria-hidden="true" viewBox="0 0 24 24" className={`size-5 shrink-0 ${item.kind === 'folder' ? 'text-amber-500' : 'text-gray-400'}`}>
      {item.kind === 'folder' ? (
        <path fill="currentColor" d="M3 6a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z" />
      ) : (
        <path
          fill="none"
          stroke="currentColor"
          strokeWidth="1.5"
          strokeLinejoin="round"
          d="M6 3h8l4 4v14H6zM14 3v4h4"
        />
      )}
    </svg>
  );
}

/** Small words after a name: encrypted, shared, linked. */
export function ItemBadges({ item }: { readonly item: Item }) {
  const badges = [item.encrypted && 'Encrypted', item.shared && 'Shared', item.linked && 'Link'].filter(
    (badge): badge is string => Boolean(badge),
  );
  if (badges.length === 0) return null;
  return (
    <span className="ml-2 inline-flex gap-1 align-middle">
      {badges.map((badge) => (
        <span key={badge} className="rounded bg-gray-100 px-1.5 py-0.5 text-xs text-gray-700 dark:bg-gray-800 dark:text-gray-300">
          {badge}
        </span>
      ))}
    </span>
  );
}
