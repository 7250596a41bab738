/** What kind of file an extension names, for the icon and its colour. */

export type FileType =
  | 'image'
  | 'video'
  | 'audio'
  | 'pdf'
  | 'archive'
  | 'code'
  | 'text'
  | 'document'
  | 'spreadsheet'
  | 'presentation'
  | 'other';

const TYPES: Readonly<Record<Exclude<FileType, 'other'>, readonly string[]>> = {
  image: ['jpg', 'jpeg', 'png', 'gif', 'webp', 'bmp', 'svg', 'tif', 'tiff', 'heic', 'heif', 'ico', 'avif', 'raw'],
  video: ['mp4', 'mkv', 'mov', 'avi', 'wmv', 'webm', 'flv', 'm4v', 'mpg', 'mpeg', '3gp'],
  audio: ['mp3', 'wav', 'flac', 'aac', 'ogg', 'm4a', 'wma', 'opus', 'aiff'],
  pdf: ['pdf'],
  archive: ['zip', 'rar', '7z', 'tar', 'gz', 'tgz', 'bz2', 'xz', 'zst', 'iso', 'dmg'],
  code: ['js', 'mjs', 'cjs', 'ts', 'tsx', 'jsx', 'json', 'html', 'htm', 'css', 'scss', 'py', 'java', 'c', 'h', 'cpp', 'hpp', 'cs', 'go', 'rs', 'rb', 'php', 'sh', 'sql', 'xml', 'yml', 'yaml', 'toml', 'kt', 'swift'],
  text: ['txt', 'md', 'markdown', 'log', 'csv', 'tsv', 'ini', 'cfg', 'conf', 'rtf'],
  document: ['doc', 'docx', 'odt', 'pages', 'wps'],
  spreadsheet: ['xls', 'xlsx', 'ods', 'numbers', 'et'],
  presentation: ['ppt', 'pptx', 'odp', 'key', 'dps'],
};

const BY_EXTENSION: ReadonlyMap<string, FileType> = new Map(
  (Object.entries(TYPES) as [FileType, readonly string[]][]).flatMap(([type, extensions]) => extensions.map((ext) => [ext, type] as const)),
);

/** The type of a file by its extension (the service's `ext`: lower case, no dot). */
export function fileType(ext: string): FileType {
  return BY_EXTENSION.get(ext.toLowerCase()) ?? 'other';
}
