/**
 * The service's name rule in the app (docs/protocol.md §10.1): the generated copy of the service's
 * own rule (src/api/generated/name-rule.ts), so that a name the service would refuse is refused
 * here first, with the same reason, before anything is sent.
 */
import { nameProblem, type NameProblem } from './generated/name-rule';

export type { NameProblem } from './generated/name-rule';
export { nameProblemMessage } from './generated/name-rule';

/**
 * The service's default name limit (FSS_MAX_NAME_LENGTH). A service set otherwise still has the last
 * word: its refusal is shown as any other.
 */
export const MAX_NAME_LENGTH = 255;

/** Why the service would refuse `name` (as typed: it checks the NFC form), or null. */
export function checkName(name: string): NameProblem | null {
  return nameProblem(name.normalize('NFC'), MAX_NAME_LENGTH);
}
