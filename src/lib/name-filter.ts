/** Names containing every typed word, ignoring case and extra spaces; done here, since those views hold every item already. */
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
