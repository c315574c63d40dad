; Atomic Chat - Windows installer, Inno Setup 6.3+ (https://jrsoftware.org/isinfo.php).
; UNTESTED on CI (no Windows machine there): the Linux tarball is the format CI builds and tests.
;
; Normally run through packaging\windows\build_installer.ps1, which builds the PyInstaller bundle
; first and passes these defines; by hand:
;   ISCC /DAppVersion=0.1.0 /DVariant=cpu /DSourceDir=C:\src\atomicchat\dist\AtomicChat ^
;        /DOutputDir=C:\src\atomicchat\dist /DIconFile=C:\src\atomicchat\build\atomicchat.ico ^
;        packaging\windows\atomicchat.iss
; Optional: /DVCRedist=path\to\vc_redist.x64.exe installs the Microsoft Visual C++ runtime when the
; machine lacks it (PyInstaller normally bundles vcruntime140/msvcp140/vcomp140 already; see
; packaging/README.md).
;
; Output: AtomicChat-<version>-windows-x86_64-<variant>-setup.exe. Per-user install by default
; (no admin rights: %LOCALAPPDATA%\Programs\Atomic Chat), "install for all users" on request.

#ifndef AppVersion
  #error Pass /DAppVersion=X.Y.Z (build_installer.ps1 reads it from atomicchat/__init__.py)
#endif
#ifndef Variant
  #define Variant "cpu"
#endif
#ifndef SourceDir
  #define SourceDir "..\..\dist\AtomicChat"
#endif
#ifndef OutputDir
  #define OutputDir "..\..\dist"
#endif
#ifndef IconFile
  #define IconFile "..\..\build\atomicchat.ico"
#endif

[Setup]
; Never change AppId: Windows uses it to find the installed version for upgrades and uninstall.
AppId={{8C1D6A4E-3B7F-4E9A-9F2D-6A1C0B5E7D21}
AppName=Atomic Chat
AppVersion={#AppVersion}
AppVerName=Atomic Chat {#AppVersion} ({#Variant})
AppPublisher=Atomic Chat
VersionInfoVersion={#AppVersion}
DefaultDirName={autopf}\Atomic Chat
DefaultGroupName=Atomic Chat
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0.17763
OutputDir={#OutputDir}
OutputBaseFilename=AtomicChat-{#AppVersion}-windows-x86_64-{#Variant}-setup
SetupIconFile={#IconFile}
UninstallDisplayIcon={app}\AtomicChat.exe
UninstallDisplayName=Atomic Chat
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
CloseApplications=yes
RestartApplications=no

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[InstallDelete]
; An upgrade replaces the whole runtime: stale DLLs of an older version must not linger in _internal.
Type: filesandordirs; Name: "{app}\_internal"

[Files]
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs
#ifdef VCRedist
Source: "{#VCRedist}"; DestDir: "{tmp}"; DestName: "vc_redist.x64.exe"; Flags: deleteafterinstall
#endif

[Icons]
Name: "{autoprograms}\Atomic Chat"; Filename: "{app}\AtomicChat.exe"
Name: "{autodesktop}\Atomic Chat"; Filename: "{app}\AtomicChat.exe"; Tasks: desktopicon

[Run]
#ifdef VCRedist
Filename: "{tmp}\vc_redist.x64.exe"; Parameters: "/install /quiet /norestart"; \
  StatusMsg: "Installing the Microsoft Visual C++ runtime..."; Flags: waituntilterminated; Check: NeedsVCRedist
#endif
Filename: "{app}\AtomicChat.exe"; Description: "{cm:LaunchProgram,Atomic Chat}"; Flags: nowait postinstall skipifsilent

; Chats, settings and downloaded models live in the user's profile (%LOCALAPPDATA%\atomicchat) and
; are kept on uninstall, like every other desktop app.

#ifdef VCRedist
[Code]
function NeedsVCRedist: Boolean;
var
  Installed: Cardinal;
begin
  Result := not (RegQueryDWordValue(HKLM64, 'SOFTWARE\Microsoft\VisualStudio\14.0\VC\Runtimes\x64',
                                    'Installed', Installed) and (Installed = 1));
end;
#endif
