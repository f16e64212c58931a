// Reads vitest's JSON report and prints the closing line CI looks for: `N passed, N failed`.
// Above it, each failed test by file and name with the first line of its failure: CI keeps only
// the tail of a run's output, and a failure that cannot be named cannot be mended.
// Usage: node scripts/test-summary.ts <report.json> [extra-passed] [extra-failed]
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'

interface Report {
  numPassedTests: number
  numFailedTests: number
  success: boolean
  testResults?: {
    name: string
    message?: string
    assertionResults?: { status: string; fullName: string; failureMessages?: string[] }[]
  }[]
}

const [file, extraPassed = '0', extraFailed = '0'] = process.argv.slice(2)
if (file === undefined) throw new Error('usage: test-summary.ts <vitest-report.json> [extra-passed] [extra-failed]')
let passed = Number(extraPassed)
let failed = Number(extraFailed)
const firstLine = (text: string | undefined): string => (text ?? '').trim().split('\n', 1)[0]!.slice(0, 300)
try {
  const report = JSON.parse(readFileSync(file, 'utf8')) as Report
  passed += report.numPassedTests
  failed += report.numFailedTests
  // A suite that failed to load has no failed test but must still fail the run.
  if (!report.success && report.numFailedTests === 0) failed += 1
  for (const suite of report.testResults ?? []) {
    const where = relative(process.cwd(), suite.name)
    const tests = (suite.assertionResults ?? []).filter((test) => test.status === 'failed')
    if (tests.length === 0 && suite.message) console.log(`failed: ${where}: ${firstLine(suite.message)}`)
    for (const test of tests) console.log(`failed: ${where} > ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`)
  }
} catch {
  failed += 1
}
console.log(`${passed} passed, ${failed} failed`)
process.exitCode = failed === 0 ? 0 : 1
