; Inno Setup 6 script: EvalDesk-<version>-setup.exe around the PyInstaller folder dist\EvalDesk\.
; Build on Windows (see installers/windows/README.md):
;   iscc /DMyAppVersion=0.1.0 installers\windows\evaldesk.iss
; Gives: a per-user or all-users install in Program Files, a Start-menu entry, an optional
; desktop icon, .evaldesk files opening in EvalDesk, and an uninstaller (Settings → Apps).

#ifndef MyAppVersion
  #define MyAppVersion "0.1.0"
#endif
#define MyAppName "EvalDesk"
#define MyAppExe "evaldesk.exe"
#define SourceDir "..\..\dist\EvalDesk"

[Setup]
AppId={{6C2E7F1A-3B4D-4E8A-9C51-0E7A1DE5C001}
AppName={#MyAppName}
AppVersion={#MyAppVersion}
AppPublisher=EvalDesk
DefaultDirName={autopf}\{#MyAppName}
DefaultGroupName={#MyAppName}
DisableProgramGroupPage=yes
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir=..\..\dist
OutputBaseFilename=EvalDesk-{#MyAppVersion}-setup
SetupIconFile=..\..\build\icons\evaldesk.ico
UninstallDisplayIcon={app}\{#MyAppExe}
Compression=lzma2/max
SolidCompression=yes
LZMANumBlockThreads=4
ChangesAssociations=yes
WizardStyle=modern
; The bundle holds ~1.5 GB of files: tell people before they start.
ExtraDiskSpaceRequired=0

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\{#MyAppName}"; Filename: "{app}\{#MyAppExe}"
Name: "{group}\Uninstall {#MyAppName}"; Filename: "{uninstallexe}"
Name: "{autodesktop}\{#MyAppName}"; Filename: "{app}\{#MyAppExe}"; Tasks: desktopicon

[Registry]
; .evaldesk -> EvalDesk.Project, opened with "evaldesk.exe" "%1" (removed on uninstall)
Root: HKA; Subkey: "Software\Classes\.evaldesk"; ValueType: string; ValueName: ""; ValueData: "EvalDesk.Project"; Flags: uninsdeletevalue
Root: HKA; Subkey: "Software\Classes\.evaldesk\OpenWithProgids"; ValueType: string; ValueName: "EvalDesk.Project"; ValueData: ""; Flags: uninsdeletevalue
Root: HKA; Subkey: "Software\Classes\EvalDesk.Project"; ValueType: string; ValueName: ""; ValueData: "EvalDesk project"; Flags: uninsdeletekey
Root: HKA; Subkey: "Software\Classes\EvalDesk.Project\DefaultIcon"; ValueType: string; ValueName: ""; ValueData: "{app}\{#MyAppExe},0"
Root: HKA; Subkey: "Software\Classes\EvalDesk.Project\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\{#MyAppExe}"" ""%1"""
Root: HKA; Subkey: "Software\Classes\Applications\{#MyAppExe}\SupportedTypes"; ValueType: string; ValueName: ".evaldesk"; ValueData: ""

[Run]
Filename: "{app}\{#MyAppExe}"; Description: "{cm:LaunchProgram,{#MyAppName}}"; Flags: nowait postinstall skipifsilent

