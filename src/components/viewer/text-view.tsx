import MarkdownIt from 'markdown-it';
import { useEffect, useMemo, useRef, useState } from 'react';
import { useI18n } from '../../i18n';
import { decodeText, TEXT_PREVIEW_BYTES } from '../../lib/text-decoding';
import { Spinner } from '../ui/button';

/** Markdown without raw HTML (it shows as text) or images; links only to http(s) and mailto, opened apart. */
const markdown = new MarkdownIt({ html: false, linkify: true }).disable('image');
markdown.validateLink = (url) => /^(https?:|mailto:)/i.test(url.trim());
markdown.renderer.rules.link_open = (tokens, index, options, _env, self) => {
  tokens[index].attrSet('target', '_blank');
  tokens[index].attrSet('rel', 'noopener noreferrer');
  return self.renderToken(tokens, index, options);
};

/** The first MiB of a text file, in its encoding (lib/text-decoding.ts), as text or rendered Markdown. */
export function TextView({ url, markdown: isMarkdown, onFail }: { readonly url: string; readonly markdown: boolean; readonly onFail: (error?: unknown) => void }) {
  const { t } = useI18n();
  const [text, setText] = useState<{ readonly text: string; readonly cut: boolean } | null>(null);
  const fail = useRef(onFail);
  fail.current = onFail;

  useEffect(() => {
    const abort = new AbortController();
    void (async () => {
      try {
        const response = await fetch(url, { headers: { Range: `bytes=0-${TEXT_PREVIEW_BYTES - 1}` }, signal: abort.signal });
        if (!response.ok) return fail.current(); // 415: bytes the service will not serve inline
        const body = new Uint8Array(await response.arrayBuffer());
        const total = Number(response.headers.get('Content-Range')?.split('/')[1] ?? body.length);
        const cut = total > TEXT_PREVIEW_BYTES || body.length > TEXT_PREVIEW_BYTES;
        setText({ text: decodeText(body.subarray(0, TEXT_PREVIEW_BYTES), cut).text, cut });
      } catch (error) {
        if (!abort.signal.aborted) fail.current(error);
      }
    })();
    return () => abort.abort();
  }, [url]);

  const html = useMemo(() => (text && isMarkdown ? markdown.render(text.text) : null), [text, isMarkdown]);
  if (!text) return <Spinner className="m-auto" />;
  return (
    <div tabIndex={0} className="min-h-0 flex-1 overflow-auto bg-white p-4 text-gray-900 dark:bg-gray-900 dark:text-gray-100">
      {text.cut && (
        <p role="note" className="mb-3 rounded bg-amber-100 px-3 py-2 text-sm text-amber-950">
          {t.textCut}
        </p>
      )}
      {html !== null ? (
        // markdown-it with html: false escapes every tag of the file: this HTML is its own.
        <div className="max-w-3xl space-y-3 break-words [&_a]:text-blue-700 [&_a]:underline dark:[&_a]:text-blue-300 [&_code]:font-mono [&_h1]:text-2xl [&_h1]:font-bold [&_h2]:text-xl [&_h2]:font-semibold [&_h3]:font-semibold [&_ol]:list-decimal [&_ol]:pl-6 [&_pre]:overflow-auto [&_pre]:rounded [&_pre]:bg-gray-100 [&_pre]:p-2 dark:[&_pre]:bg-gray-800 [&_ul]:list-disc [&_ul]:pl-6" dangerouslySetInnerHTML={{ __html: html }} />
      ) : (
        <pre className="font-mono text-sm break-words whitespace-pre-wrap">{text.text}</pre>
      )}
    </div>
  );
}
