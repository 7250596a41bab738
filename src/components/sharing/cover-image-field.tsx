import { useEffect, useId, useRef, useState } from 'react';
import { useI18n, type Messages } from '../../i18n';
import { Button } from '../ui/button';
import { Icon } from '../ui/icons';
import { COVER_TYPES, coverProblem, type CoverProblem } from './cover-image';

const problemText = (t: Messages, problem: CoverProblem): string =>
  ({ empty: t.sharingCoverEmpty, 'too-large': t.sharingCoverTooLarge, 'not-an-image': t.sharingCoverNotImage })[problem];

/** The object URL of a chosen file while it is shown, revoked afterwards. */
function useObjectUrl(file: File | null): string | null {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    if (!file) {
      setUrl(null);
      return;
    }
    const objectUrl = URL.createObjectURL(file);
    setUrl(objectUrl);
    return () => URL.revokeObjectURL(objectUrl);
  }, [file]);
  return url;
}

/** Checked at once by the service's rules; uploaded after the share is saved, since the service covers only an existing share (409). */
export function CoverImageField({
  current,
  shared,
  file,
  onFile,
}: {
  /** The current cover's URL, "" for none. */
  readonly current: string;
  /** The file has a share already; if not, the image is uploaded once "Share" has made one. */
  readonly shared: boolean;
  readonly file: File | null;
  readonly onFile: (file: File | null) => void;
}) {
  const { t } = useI18n();
  const id = useId();
  const headingId = useId();
  const hintId = useId();
  const errorId = useId();
  const input = useRef<HTMLInputElement>(null);
  const [problem, setProblem] = useState<CoverProblem | null>(null);
  const preview = useObjectUrl(file);

  // Uploaded or discarded: the input forgets the file too, so that it can be chosen again.
  useEffect(() => {
    if (!file && input.current) input.current.value = '';
  }, [file]);

  const onChange = async (chosen: File | undefined) => {
    if (!chosen) return;
    const found = await coverProblem(chosen);
    setProblem(found);
    if (found) {
      onFile(null);
      // Cleared even if no file was chosen before, so that choosing the same (fixed) file again is a change.
      if (input.current) input.current.value = '';
    } else {
      onFile(chosen);
    }
  };

  const discard = () => {
    onFile(null);
    input.current?.focus();
  };

  return (
    <div className="space-y-2">
      <span id={headingId} className="block text-sm font-medium">
        {t.sharingCover}
      </span>
      {(current || preview) && (
        <div className="flex flex-wrap items-start gap-3">
          {current && <Thumbnail src={current} caption={t.sharingCoverCurrent} />}
          {preview && <Thumbnail src={preview} caption={t.sharingCoverNew} fresh />}
        </div>
      )}
      <div className="flex flex-wrap items-center gap-2">
        {/* The file input itself, visually hidden: its button would speak the browser's language. */}
        <input
          ref={input}
          id={id}
          type="file"
          accept={COVER_TYPES.join(',')}
          onChange={(event) => void onChange(event.target.files?.[0])}
          aria-labelledby={headingId}
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? `${errorId} ${hintId}` : hintId}
          className="peer sr-only"
        />
        <label
          htmlFor={id}
          className="inline-flex cursor-pointer items-center gap-2 rounded-md border border-gray-300 bg-white px-2.5 py-1.5 text-sm font-medium text-gray-900 hover:bg-gray-100 peer-focus-visible:outline-2 peer-focus-visible:outline-offset-2 peer-focus-visible:outline-blue-600 dark:border-gray-600 dark:bg-gray-800 dark:text-gray-100 dark:hover:bg-gray-700"
        >
          <Icon name="upload" className="size-4" />
          {current || file ? t.sharingCoverChange : t.sharingCoverChoose}
        </label>
        {file && (
          <>
            <span className="min-w-0 truncate text-sm text-gray-800 dark:text-gray-200" title={file.name}>
              {file.name}
            </span>
            <Button variant="ghost" compact onClick={discard}>
              {t.sharingCoverDiscard}
            </Button>
          </>
        )}
      </div>
      {problem && (
        <p id={errorId} role="alert" className="text-sm text-red-800 dark:text-red-300">
          {problemText(t, problem)}
        </p>
      )}
      <p id={hintId} className="text-sm text-gray-700 dark:text-gray-300">
        {t.sharingCoverHint}
        {!shared && <span className="mt-1 block">{t.sharingCoverAfterSharing}</span>}
      </p>
    </div>
  );
}

function Thumbnail({ src, caption, fresh = false }: { readonly src: string; readonly caption: string; readonly fresh?: boolean }) {
  return (
    <figure className="flex flex-col items-center gap-1">
      <img
        src={src}
        alt={caption}
        className={`h-24 w-32 rounded border bg-gray-100 object-cover dark:bg-gray-800 ${
          fresh ? 'border-blue-400 dark:border-blue-500' : 'border-gray-200 dark:border-gray-700'
        }`}
      />
      {/* The image's name already says it; the caption is for the eye. */}
      <figcaption aria-hidden="true" className="text-xs text-gray-700 dark:text-gray-300">
        {caption}
      </figcaption>
    </figure>
  );
}
