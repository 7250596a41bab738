import { describe, expect, it } from 'vitest';
import { previewKind } from './preview-kinds';

describe('preview kinds by extension', () => {
  it('shows images, SVG among them, as images', () => {
    for (const ext of ['jpg', 'jpeg', 'png', 'gif', 'webp', 'avif', 'bmp', 'svg']) expect(previewKind(ext)).toBe('image');
  });

  it('plays video and audio the browser can play', () => {
    expect(['mp4', 'm4v', 'webm'].map(previewKind)).toEqual(['video', 'video', 'video']);
    expect(['mp3', 'm4a', 'aac', 'ogg', 'oga', 'opus', 'wav', 'flac'].every((ext) => previewKind(ext) === 'audio')).toBe(true);
  });

  it('pages PDFs, renders Markdown and shows source code, CSV, JSON and HTML as text', () => {
    expect(previewKind('pdf')).toBe('pdf');
    expect(previewKind('md')).toBe('markdown');
    expect(['txt', 'log', 'csv', 'json', 'xml', 'html', 'ts', 'py'].every((ext) => previewKind(ext) === 'text')).toBe(true);
  });

  it('ignores the case of the extension', () => {
    expect(previewKind('JPG')).toBe('image');
  });

  it('has no preview for other files', () => {
    for (const ext of ['', 'zip', 'docx', 'mkv', 'exe', 'tiff']) expect(previewKind(ext)).toBe('none');
  });
});
