/** How the viewer shows a file, by its extension; the service decides what it may serve (issue 21). */

export type PreviewKind = 'image' | 'video' | 'audio' | 'pdf' | 'markdown' | 'text' | 'none';

const KINDS: Readonly<Record<Exclude<PreviewKind, 'none'>, readonly string[]>> = {
  image: ['jpg', 'jpeg', 'png', 'gif', 'webp', 'avif', 'bmp', 'svg'],
  video: ['mp4', 'm4v', 'webm'],
  audio: ['mp3', 'm4a', 'aac', 'ogg', 'oga', 'opus', 'wav', 'flac'],
  pdf: ['pdf'],
  markdown: ['md', 'markdown'],
  text: [
    'txt', 'text', 'log', 'csv', 'tsv', 'json', 'xml', 'html', 'htm', 'css', 'ini', 'cfg', 'conf', 'yml', 'yaml', 'toml',
    'js', 'mjs', 'cjs', 'ts', 'tsx', 'jsx', 'py', 'java', 'c', 'h', 'cpp', 'hpp', 'cs', 'go', 'rs', 'rb', 'php', 'sh',
    'sql', 'kt', 'swift', 'scss', 'lua', 'pl', 'r', 'bat', 'ps1',
  ],
};

const BY_EXTENSION: ReadonlyMap<string, PreviewKind> = new Map(
  (Object.entries(KINDS) as [PreviewKind, readonly string[]][]).flatMap(([kind, extensions]) => extensions.map((ext) => [ext, kind] as const)),
);

/** The preview kind of an extension (the service's `ext`: lower case, no dot). */
export function previewKind(ext: string): PreviewKind {
  return BY_EXTENSION.get(ext.toLowerCase()) ?? 'none';
}
