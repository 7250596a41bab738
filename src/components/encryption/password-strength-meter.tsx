import { useMemo } from 'react';
import { useI18n, type Messages } from '../../i18n';
import { estimateStrength, type StrengthHint, type StrengthLevel } from '../../lib/password-strength';

const LEVELS: readonly StrengthLevel[] = ['weak', 'fair', 'good', 'strong'];

const barColor: Readonly<Record<StrengthLevel, string>> = {
  weak: 'bg-red-600 dark:bg-red-400',
  fair: 'bg-amber-500 dark:bg-amber-400',
  good: 'bg-blue-600 dark:bg-blue-400',
  strong: 'bg-green-700 dark:bg-green-400',
};

const levelName = (level: StrengthLevel, t: Messages) =>
  ({ weak: t.strengthWeak, fair: t.strengthFair, good: t.strengthGood, strong: t.strengthStrong })[level];

const hintText = (hint: StrengthHint, t: Messages) =>
  ({ common: t.strengthHintCommon, pattern: t.strengthHintPattern, length: t.strengthHintLength, variety: t.strengthHintVariety })[hint];

/** Strength in four steps and in words (the colour only repeats them), with advice while it is weak or fair. */
export function PasswordStrengthMeter({ id, password }: { readonly id: string; readonly password: string }) {
  const { t } = useI18n();
  const strength = useMemo(() => estimateStrength(password), [password]);
  if (password.length === 0) return <p id={id} className="sr-only">{t.strengthEmpty}</p>;
  const step = LEVELS.indexOf(strength.level) + 1;
  const [hint] = strength.hints;
  return (
    <div className="space-y-1" data-testid="password-strength" data-level={strength.level}>
      <div aria-hidden="true" className="flex gap-1">
        {LEVELS.map((level, index) => (
          <span key={level} className={`h-1.5 flex-1 rounded-full ${index < step ? barColor[strength.level] : 'bg-gray-200 dark:bg-gray-700'}`} />
        ))}
      </div>
      <p id={id} aria-live="polite" className="text-sm text-gray-800 dark:text-gray-200">
        <span className="font-medium">{t.strengthIs(levelName(strength.level, t))}</span>
        {hint && (strength.level === 'weak' || strength.level === 'fair') && <span> {hintText(hint, t)}</span>}
      </p>
    </div>
  );
}
