/**
 * `fss fsck`: checks that the database and the content store agree and that every counter is what
 * the rows say. Run after a crash, or any time; `repair` fixes what can be fixed without a person:
 * counters are recomputed, orphan blobs (bytes no row knows) are queued for removal and derived
 * images whose content is gone are deleted. Missing
 * bytes and impossible tree positions are only reported.
 */
import {
  folderSizeMismatches,
  misplacedItems,
  setFolderSize,
  setUsedBytes,
  usedBytesMismatches,
  type MisplacedItem,
  type SizeMismatch,
} from '../../storage/db/repositories/integrity-repository';
import { auditContent, removeUnreferencedContent, type ContentAudit } from '../content/content-removal';
import type { Services } from '../context';
import { auditDerivedImages } from '../previews/derived-images';

export interface IntegrityReport {
  readonly content: ContentAudit;
  /** Derived images (thumbnails) whose content is gone. */
  readonly derivedOrphans: readonly string[];
  readonly folderSizes: readonly SizeMismatch[];
  readonly usedBytes: readonly SizeMismatch[];
  readonly misplaced: readonly MisplacedItem[];
  /** Whether `repair` was asked for (then counters and orphans above were fixed). */
  readonly repaired: boolean;
}

/** Problems that no repair removes: lost bytes and impossible tree positions. */
export function unrepairable(report: IntegrityReport): number {
  return report.content.damaged.length + report.misplaced.length;
}

/** Everything found, repaired or not. */
export function problemCount(report: IntegrityReport): number {
  return report.content.orphans.length + report.derivedOrphans.length + report.folderSizes.length + report.usedBytes.length + unrepairable(report);
}

export async function checkIntegrity(services: Services, options: { readonly repair?: boolean } = {}): Promise<IntegrityReport> {
  const repair = options.repair ?? false;
  const { db } = services;
  const content = await auditContent(services, { repair });
  const derivedOrphans = await auditDerivedImages(services, { repair });
  const folderSizes = await folderSizeMismatches(db);
  const usedBytes = await usedBytesMismatches(db);
  const misplaced = await misplacedItems(db);
  if (repair) {
    await db.transaction().execute(async (tx) => {
      for (const folder of folderSizes) await setFolderSize(tx, folder.id, folder.expected);
      for (const account of usedBytes) await setUsedBytes(tx, account.id, account.expected);
    });
    // Orphans were queued by the audit; removing them now leaves the store as the rows say.
    if (content.orphans.length > 0) await removeUnreferencedContent(services);
  }
  return { content, derivedOrphans, folderSizes, usedBytes, misplaced, repaired: repair };
}

/** The report as lines for a person. */
export function describeReport(report: IntegrityReport): string[] {
  const lines: string[] = [];
  const fixed = report.repaired ? ' (repaired)' : '';
  for (const key of report.content.orphans) lines.push(`orphan blob ${key}: no row refers to it${fixed}`);
  for (const key of report.derivedOrphans) lines.push(`orphan derived image ${key}: its content is gone${fixed}`);
  for (const d of report.content.damaged) {
    lines.push(`content ${d.contentId} (${d.storageKey}): ${d.problem === 'missing' ? 'bytes missing from the store' : 'stored size differs'}`);
  }
  for (const f of report.folderSizes) lines.push(`folder ${f.id}: size ${f.stored}, files beneath total ${f.expected}${fixed}`);
  for (const a of report.usedBytes) lines.push(`account ${a.id}: used_bytes ${a.stored}, files and cover images total ${a.expected}${fixed}`);
  for (const m of report.misplaced) lines.push(`${m.type} ${m.id}: ${m.problem}`);
  return lines;
}
