/** The service's name rule (generated copy), so a name it would refuse is refused here first, with the same reason. */
import { nameProblem, type NameProblem } from './generated/name-rule';

export type { NameProblem } from './generated/name-rule';
export { nameProblemMessage } from './generated/name-rule';

/** The service's default limit; a service set otherwise still has the last word. */
export const MAX_NAME_LENGTH = 255;

/** Why the service would refuse `name` (as typed: it checks the NFC form), or null. */
export function checkName(name: string): NameProblem | null {
  return nameProblem(name.normalize('NFC'), MAX_NAME_LENGTH);
}
