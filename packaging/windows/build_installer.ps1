# Atomic Chat - build the Windows installer. UNTESTED on CI (no Windows there).
#
#   powershell -ExecutionPolicy Bypass -File packaging\windows\build_installer.ps1
#   ... -Python C:\venvs\atomicchat-cuda\Scripts\python.exe      # ship a CUDA build
#
# Needs: the Python environment to ship (atomicchat installed with the [package] extra, its
# llama-cpp-python built as described in packaging/README.md) and Inno Setup 6 (ISCC.exe).
# Steps: PyInstaller bundle -> its self-test (console twin atomicchat-cli.exe) -> .ico -> ISCC.
param(
  [string]$Python = "",
  [string]$Iscc = "",
  [switch]$SkipSelfTest
)
$ErrorActionPreference = "Stop"
$root = (Resolve-Path "$PSScriptRoot\..\..").Path
if (-not $Python) { $Python = Join-Path $root ".venv\Scripts\python.exe" }
function Invoke-Checked([string]$exe, [string[]]$arguments) {
  & $exe @arguments
  if ($LASTEXITCODE -ne 0) { throw "$exe $($arguments -join ' ') failed with exit code $LASTEXITCODE" }
}

$dist = Join-Path $root "dist"
Invoke-Checked $Python @("$root\packaging\build_bundle.py", "--dist", $dist, "--work", "$root\build\pyinstaller")
$bundle = Join-Path $dist "AtomicChat"
if (-not $SkipSelfTest) {
  # The windowed AtomicChat.exe has no console; the console twin prints the report.
  Invoke-Checked "$bundle\atomicchat-cli.exe" @("--self-test")
}
$version = (& $Python "$root\packaging\bundle_config.py" version).Trim()
$variant = (Get-Content "$bundle\_internal\atomicchat_build.json" -Raw | ConvertFrom-Json).variant
$ico = Join-Path $root "build\atomicchat.ico"
Invoke-Checked $Python @("$root\packaging\make_icons.py", "--ico", $ico)

if (-not $Iscc) {
  $candidates = @("${env:ProgramFiles(x86)}\Inno Setup 6\ISCC.exe", "$env:ProgramFiles\Inno Setup 6\ISCC.exe", "$env:LOCALAPPDATA\Programs\Inno Setup 6\ISCC.exe")
  $Iscc = $candidates | Where-Object { Test-Path $_ } | Select-Object -First 1
  if (-not $Iscc) { throw "ISCC.exe (Inno Setup 6) not found; pass -Iscc PATH" }
}
$defines = @("/DAppVersion=$version", "/DVariant=$variant", "/DSourceDir=$bundle", "/DOutputDir=$dist", "/DIconFile=$ico")
$redist = Join-Path $PSScriptRoot "redist\vc_redist.x64.exe"
if (Test-Path $redist) { $defines += "/DVCRedist=$redist" }
Invoke-Checked $Iscc ($defines + @("$PSScriptRoot\atomicchat.iss"))
Write-Output (Join-Path $dist "AtomicChat-$version-windows-x86_64-$variant-setup.exe")
