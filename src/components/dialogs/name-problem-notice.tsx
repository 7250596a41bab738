import { useI18n } from '../../i18n';
import type { NameProblem } from '../../api/name-check';

/** Why the typed name cannot be used, said in the dialog before anything is sent. */
export function NameProblemNotice({ problem }: { readonly problem: NameProblem }) {
  const { t } = useI18n();
  return (
    <p
      role="alert"
      className="rounded-md border border-red-300 bg-red-50 p-3 text-sm break-words text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100"
    >
      {t.nameProblem(problem)}
    </p>
  );
}
