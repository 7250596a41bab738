// The public share page, /s/:code: one state per ShareOpen answer (docs/sharing.md §5, §7). A `?pwd=` code is used, then taken out
// of the address so it is not bookmarked or kept in history. A chunk of its own (App.tsx): the file manager's first load lacks it.
import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { useParams, useSearchParams } from 'react-router';
import type { Item } from '../api/results';
import { shareProblem, visitorShareQueries, type ShareProblem } from '../api/share-service';
import { CodeGate, type GateProblem } from '../components/share-page/code-gate';
import { ShareFrame } from '../components/share-page/share-frame';
import { ShareState } from '../components/share-page/share-state';
import { limitReached, ShareSummary } from '../components/share-page/share-summary';
import { SharedFileDownload } from '../components/share-page/shared-file';
import { SharedFolder } from '../components/share-page/shared-folder';
import { useCountdown } from '../components/share-page/use-countdown';
import { Button, Spinner } from '../components/ui/button';
import { useDocumentTitle } from '../hooks/use-document-title';
import { useReplacedParam } from '../hooks/use-filter-param';
import { useI18n } from '../i18n';
import { describeError, durationText } from '../components/error-text';
import { shareCodeStore } from '../lib/share-code-store';

export function SharePage() {
  const { code = '' } = useParams();
  return <ShareView key={code} code={code} />;
}

/** What the page shows; a change of kind moves the focus to the new heading. */
type View =
  | { readonly kind: 'loading' }
  | { readonly kind: 'gate'; readonly problem: GateProblem | null; readonly checking: boolean }
  | { readonly kind: 'shared'; readonly item: Item }
  | { readonly kind: 'problem'; readonly problem: ShareProblem };

function ShareView({ code }: { readonly code: string }) {
  const [params] = useSearchParams();
  const [, setLinkCode] = useReplacedParam('pwd');
  const linkCode = params.get('pwd');
  const [downpwd, setDownpwd] = useState(() => linkCode ?? shareCodeStore.acceptedCode(code) ?? '');
  // Once the share has asked for a code, the form stays while codes are checked or attempts wait.
  const [asksForCode, setAsksForCode] = useState(false);
  const open = useQuery(visitorShareQueries.open(code, downpwd));
  const problem = open.error ? shareProblem(open.error) : null;
  const problemKind = problem?.kind;

  // ?pwd=… fills in the code; then it leaves the address (the history entry is replaced).
  useEffect(() => {
    if (linkCode === null) return;
    setDownpwd(linkCode);
    setLinkCode('');
  }, [linkCode, setLinkCode]);

  useEffect(() => {
    if (open.data && downpwd !== '') shareCodeStore.rememberCode(code, downpwd);
  }, [open.data, code, downpwd]);

  useEffect(() => {
    if (problemKind === 'code-required' || problemKind === 'code-wrong') setAsksForCode(true);
    // A remembered code that is wrong now (the owner changed it) is forgotten.
    if (problemKind === 'code-wrong' && shareCodeStore.acceptedCode(code) === downpwd) shareCodeStore.forgetCode(code);
  }, [problemKind, code, downpwd]);

  const view = viewOf(open.data, open.isPending, problem, asksForCode, downpwd !== '', open.errorUpdatedAt);

  // The focus follows the page from state to state (the form focuses its own field).
  const main = useRef<HTMLElement>(null);
  const shown = useRef(view.kind);
  useEffect(() => {
    if (shown.current === view.kind) return;
    shown.current = view.kind;
    if (view.kind !== 'gate' && view.kind !== 'loading') main.current?.querySelector<HTMLElement>('h1')?.focus();
  }, [view.kind]);

  const submitCode = (value: string) => {
    if (value === downpwd) void open.refetch();
    else setDownpwd(value);
  };

  return (
    <ShareFrame mainRef={main}>
      {view.kind === 'loading' ? (
        <Loading />
      ) : view.kind === 'gate' ? (
        <GateView initialCode={downpwd} view={view} attempt={open.errorUpdatedAt} onSubmit={submitCode} />
      ) : view.kind === 'shared' ? (
        <SharedView code={code} downpwd={downpwd} item={view.item} />
      ) : (
        <ProblemView problem={view.problem} retrying={open.isFetching} until={open.errorUpdatedAt} onRetry={() => void open.refetch()} />
      )}
    </ShareFrame>
  );
}

function viewOf(
  item: Item | undefined,
  pending: boolean,
  problem: ShareProblem | null,
  asksForCode: boolean,
  triesCode: boolean,
  answeredAt: number,
): View {
  if (item) return { kind: 'shared', item };
  if (pending || !problem) return asksForCode ? { kind: 'gate', problem: null, checking: true } : { kind: 'loading' };
  switch (problem.kind) {
    case 'code-required':
      return { kind: 'gate', problem: null, checking: false };
    case 'code-wrong':
      return { kind: 'gate', problem: { kind: 'wrong' }, checking: false };
    case 'throttled':
      // Attempts at a code wait at the form; a share not yet known to need one waits on its own page.
      return asksForCode || triesCode
        ? { kind: 'gate', problem: { kind: 'throttled', retryAfter: problem.retryAfter, until: answeredAt + problem.retryAfter * 1000 }, checking: false }
        : { kind: 'problem', problem };
    default:
      return { kind: 'problem', problem };
  }
}

function Loading() {
  const { t } = useI18n();
  useDocumentTitle(t.sharePageTitle);
  return (
    <p role="status" className="flex items-center justify-center gap-2 py-16 text-gray-700 dark:text-gray-300">
      <Spinner /> {t.sharePageOpening}
    </p>
  );
}

function GateView({
  initialCode,
  view,
  attempt,
  onSubmit,
}: {
  readonly initialCode: string;
  readonly view: Extract<View, { kind: 'gate' }>;
  readonly attempt: number;
  readonly onSubmit: (code: string) => void;
}) {
  const { t } = useI18n();
  useDocumentTitle(t.sharePageCodeHeading);
  return <CodeGate initialCode={initialCode} checking={view.checking} problem={view.problem} attempt={attempt} onSubmit={onSubmit} />;
}

function SharedView({ code, downpwd, item }: { readonly code: string; readonly downpwd: string; readonly item: Item }) {
  const { t } = useI18n();
  useDocumentTitle(item.name);
  const atLimit = limitReached(item);
  const limit = atLimit ? (
    <ShareState level={2} icon="downloadOff" tone="warning" title={t.sharePageLimitTitle}>
      <p>{t.sharePageLimitText(item.downValue ?? 0)}</p>
    </ShareState>
  ) : null;

  if (item.type === 'file') {
    return <ShareSummary item={item}>{limit ?? <SharedFileDownload code={code} downpwd={downpwd} file={item} />}</ShareSummary>;
  }
  return (
    <div className="flex flex-1 flex-col gap-4">
      <ShareSummary item={item} />
      {limit ?? <SharedFolder code={code} downpwd={downpwd} root={item} />}
    </div>
  );
}

function ProblemView({
  problem,
  retrying,
  until,
  onRetry,
}: {
  readonly problem: ShareProblem;
  readonly retrying: boolean;
  /** When the answer came (epoch ms): a 429's wait counts from there. */
  readonly until: number;
  readonly onRetry: () => void;
}) {
  const { t } = useI18n();
  const waitUntil = problem.kind === 'throttled' ? until + problem.retryAfter * 1000 : null;
  const wait = useCountdown(waitUntil);
  const text = problemText(problem, t);
  useDocumentTitle(text.title);

  const retry =
    problem.kind === 'network' || problem.kind === 'other' || problem.kind === 'throttled' ? (
      <Button variant="secondary" onClick={onRetry} busy={retrying} busyLabel={t.tryingAgain} disabled={wait > 0}>
        {wait > 0 ? t.sharePageCodeWait(wait) : t.tryAgain}
      </Button>
    ) : undefined;

  return (
    <ShareState icon={text.icon} tone={text.tone} title={text.title} actions={retry}>
      <p>{problem.kind === 'throttled' ? (wait > 0 ? t.sharePageThrottledWait(durationText(problem.retryAfter, t)) : t.sharePageThrottledReady) : text.message}</p>
    </ShareState>
  );
}

function problemText(problem: ShareProblem, t: ReturnType<typeof useI18n>['t']) {
  switch (problem.kind) {
    case 'not-found':
      return { icon: 'linkBroken', tone: 'warning', title: t.sharePageNotFoundTitle, message: t.sharePageNotFoundText } as const;
    case 'locked':
      return { icon: 'key', tone: 'warning', title: t.sharePageLockedTitle, message: t.sharePageLockedText } as const;
    case 'throttled':
      return { icon: 'hourglass', tone: 'warning', title: t.sharePageThrottledTitle, message: '' } as const;
    case 'network':
      return { icon: 'cloudOff', tone: 'error', title: t.errNetworkTitle, message: t.errNetwork } as const;
    default: {
      const { title, message } = describeError(problem.kind === 'other' ? problem.error : undefined, t, t.sharePageSubjectShare);
      return { icon: 'warning', tone: 'error', title, message } as const;
    }
  }
}
