import { useEffect, useRef, useState, type RefObject } from 'react';
import { useI18n } from '../../i18n';
import { copyText } from '../../lib/clipboard';
import { linkWithCode } from '../../lib/extraction-code';
import { notify } from '../../lib/notices';
import { Button } from '../ui/button';
import { Icon } from '../ui/icons';

const SAID_MS = 4000;

/** In a dialog the result is said in the dialog: the page behind a modal is inert, so its notices would not be announced. */
export function CopyLinkButtons({
  url,
  code,
  field,
  announce,
  describedBy,
  compactOnPhone = false,
}: {
  readonly url: string;
  readonly code: string;
  /** The visible field that shows `url`: where the fallback selects the link. */
  readonly field?: RefObject<HTMLInputElement | null>;
  readonly announce: 'inline' | 'notice';
  /** What the buttons copy the link of, for screen readers (the buttons' names stay "Copy link"). */
  readonly describedBy?: string;
  /** Icons with hidden labels below the md breakpoint, for a row of many buttons. */
  readonly compactOnPhone?: boolean;
}) {
  const { t } = useI18n();
  const [said, setSaid] = useState('');
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);

  const copy = async (text: string) => {
    const result = await copyText(text, field?.current);
    const message = result === 'copied' ? t.sharingLinkCopied : t.sharingCopySelected;
    if (announce === 'notice') {
      notify('info', message);
      return;
    }
    // Cleared first, so that copying twice is announced twice.
    setSaid('');
    clearTimeout(timer.current);
    requestAnimationFrame(() => setSaid(message));
    timer.current = setTimeout(() => setSaid(''), SAID_MS);
  };

  const label = (text: string) => <span className={compactOnPhone ? 'sr-only md:not-sr-only' : ''}>{text}</span>;
  return (
    <div className="flex flex-wrap items-center gap-2">
      <Button icon="copyText" variant="secondary" compact onClick={() => void copy(url)} aria-describedby={describedBy} title={compactOnPhone ? t.sharingCopyLink : undefined}>
        {label(t.sharingCopyLink)}
      </Button>
      {code && (
        <Button
          icon="shareCopyCode"
          variant="secondary"
          compact
          onClick={() => void copy(linkWithCode(url, code))}
          aria-describedby={describedBy}
          title={compactOnPhone ? t.sharingCopyLinkWithCode : undefined}
        >
          {label(t.sharingCopyLinkWithCode)}
        </Button>
      )}
      {announce === 'inline' && (
        <p role="status" className="text-sm text-green-800 dark:text-green-300">
          {said && (
            <>
              <Icon name="check" className="mr-1 inline size-4 align-[-3px]" />
              {said}
            </>
          )}
        </p>
      )}
    </div>
  );
}
