/** A backup or restore the operator asked for wrongly (a path, a directory, a backup): said as it is. */
export class BackupRequestError extends Error {}
