// Reads vitest's JSON report and prints the closing line CI looks for: `N passed, N failed`.
// Usage: node scripts/test-summary.ts <report.json> [extra-passed] [extra-failed]
import { readFileSync } from 'node:fs'

const [file, extraPassed = '0', extraFailed = '0'] = process.argv.slice(2)
if (file === undefined) throw new Error('usage: test-summary.ts <vitest-report.json> [extra-passed] [extra-failed]')
let passed = Number(extraPassed)
let failed = Number(extraFailed)
try {
  const report = JSON.parse(readFileSync(file, 'utf8')) as {
    numPassedTests: number
    numFailedTests: number
    numTotalTestSuites: number
    success: boolean
  }
  passed += report.numPassedTests
  failed += report.numFailedTests
  // A suite that failed to load has no failed test but must still fail the run.
  if (!report.success && report.numFailedTests === 0) failed += 1
} catch {
  failed += 1
}
console.log(`${passed} passed, ${failed} failed`)
process.exitCode = failed === 0 ? 0 : 1
