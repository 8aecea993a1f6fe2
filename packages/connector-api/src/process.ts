/**
 * Whether a process with this PID runs on this host. Connectors name their temporary files and
 * directories after the PID that owns them, so a later run can remove what a process killed mid-write
 * left behind; a live PID (even a recycled one) keeps its files, which only costs disk until it exits.
 * EPERM means the process exists but belongs to another user.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
