/**
 * The "Filter by name" box of the shares and links views: the items whose name contains every
 * word typed, ignoring case, accents-as-typed (NFC) and extra spaces. The views hold every shared
 * or linked item already, so filtering is done here rather than by another call.
 */
export function nameFilter(query: string): ((name: string) => boolean) | null {
  const words = query.normalize('NFC').toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return null;
  return (name) => {
    const lower = name.normalize('NFC').toLowerCase();
    return words.every((word) => lower.includes(word));
  };
}

/** The items whose name matches the query; the same array when the query is empty. */
export function filterByName<T extends { readonly name: string }>(items: readonly T[], query: string): readonly T[] {
  const matches = nameFilter(query);
  return matches ? items.filter((item) => matches(item.name)) : items;
}
