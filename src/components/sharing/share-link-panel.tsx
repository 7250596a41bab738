import { useId, useRef, type Ref } from 'react';
import type { Item } from '../../api/results';
import { useI18n } from '../../i18n';
import { itemKey } from '../../lib/items';
import { inputClass } from '../ui/field';
import { CopyLinkButtons } from './copy-link-buttons';
import { ShareFacts } from './share-facts';

/** Shared items' links, selected whole on focus, with copy buttons, code and downloads. */
export function ShareLinkPanel({ shares, copyRef }: { readonly shares: readonly Item[]; readonly copyRef?: Ref<HTMLDivElement> }) {
  const { t } = useI18n();
  const headingId = useId();
  if (shares.length === 1) {
    return (
      <section aria-label={t.sharingLink} className="space-y-2 rounded-md border border-gray-200 bg-gray-50 p-3 dark:border-gray-700 dark:bg-gray-800/60">
        <ShareLinkRow share={shares[0]} label={t.sharingLink} copyRef={copyRef} />
      </section>
    );
  }
  return (
    <section aria-labelledby={headingId} className="space-y-2">
      <h3 id={headingId} className="text-sm font-medium">
        {t.sharingLinks}
      </h3>
      <ul className="max-h-64 space-y-2 overflow-auto">
        {shares.map((share, index) => (
          <li key={itemKey(share)} className="space-y-2 rounded-md border border-gray-200 bg-gray-50 p-3 dark:border-gray-700 dark:bg-gray-800/60">
            <ShareLinkRow share={share} label={t.sharingLinkOf(share.name)} copyRef={index === 0 ? copyRef : undefined} describe />
          </li>
        ))}
      </ul>
    </section>
  );
}

function ShareLinkRow({
  share,
  label,
  copyRef,
  describe = false,
}: {
  readonly share: Item;
  readonly label: string;
  readonly copyRef?: Ref<HTMLDivElement>;
  /** Among several links: the copy buttons are described by the link's label (which item). */
  readonly describe?: boolean;
}) {
  const id = useId();
  const labelId = useId();
  const field = useRef<HTMLInputElement>(null);
  const url = share.url ?? '';
  return (
    <>
      <div>
        <label id={labelId} htmlFor={id} className="block text-sm font-medium break-words">
          {label}
        </label>
        <input
          ref={field}
          id={id}
          type="text"
          readOnly
          value={url}
          onFocus={(event) => event.currentTarget.select()}
          className={`${inputClass} font-mono text-sm`}
        />
      </div>
      <div ref={copyRef}>
        <CopyLinkButtons url={url} code={share.downpwd ?? ''} field={field} announce="inline" describedBy={describe ? labelId : undefined} />
      </div>
      <ShareFacts share={share} />
    </>
  );
}
