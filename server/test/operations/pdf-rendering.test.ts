/**
 * The first page of a PDF drawn by pdf.js in a worker thread (operations/previews/pdf-rendering.ts),
 * on PDFs written by hand (helpers/pdfs.ts): the pixels, the timeout that ends a worker, and the
 * event loop left free while a page draws.
 */
import { describe, expect, test } from 'vitest';
import { UnreadableImage } from '../../src/operations/previews/image-making';
import { renderFirstPage } from '../../src/operations/previews/pdf-rendering';
import { pagePdf } from '../helpers/pdfs';

/** A page of a million lines: some 30 KB of file that takes pdf.js far longer than a test's timeout. */
const slowPdf = () => pagePdf({ strokes: 1_000_000 });

describe('drawing the first page of a PDF', () => {
  test('fits its longer side to the box, with the colour of the page', async () => {
    const page = await renderFirstPage(pagePdf({ mediaBox: [100, 200], rgb: [1, 0, 0] }), 96);
    expect([page.width, page.height]).toEqual([48, 96]);
    expect([...page.pixels.subarray(0, 4)]).toEqual([255, 0, 0, 255]);
    expect(page.pixels.length).toBe(48 * 96 * 4);
  });

  test('a password-protected PDF is refused as such', async () => {
    await expect(renderFirstPage(pagePdf({ userPassword: 'secret' }), 96)).rejects.toThrow(new UnreadableImage('a password-protected PDF'));
  });

  test('a page that takes too long is given up at the timeout, and the next PDF is still drawn', async () => {
    await expect(renderFirstPage(slowPdf(), 96, 1000)).rejects.toThrow(/takes longer than 1 s to draw/);
    expect((await renderFirstPage(pagePdf(), 96)).width).toBe(96);
  });

  test('the event loop stays free while a page draws: timers run before the drawing ends', async () => {
    const finished: string[] = [];
    const drawing = renderFirstPage(slowPdf(), 96, 3000).catch(() => finished.push('pdf'));
    for (let tick = 0; tick < 10; tick++) await new Promise((resolve) => setTimeout(resolve, 10));
    finished.push('timers');
    await drawing;
    expect(finished).toEqual(['timers', 'pdf']);
  });

  test('PDFs drawn at once each get their own page', async () => {
    const colours = [[1, 0, 0], [0, 0, 1], [0, 1, 0]] as const;
    const pages = await Promise.all(colours.map((rgb) => renderFirstPage(pagePdf({ rgb }), 32)));
    expect(pages.map((page) => [...page.pixels.subarray(0, 3)])).toEqual(colours.map((rgb) => rgb.map((c) => c * 255)));
  });
});
