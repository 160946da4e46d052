// SPDX-License-Identifier: Apache-2.0
// Writes each java block of README.md that follows a line "<!-- example: NAME -->" to
// src/main/java/readme/ReadmeNameExample.java: its import lines at the top, the rest as the body of
// main, unchanged. `readme` (the README's path) comes from the invoker plugin's scriptVariables.
def text = new File(readme).getText('UTF-8')
def lines = text.split('\n', -1) as List
def out = new File(basedir, 'src/main/java/readme')
out.mkdirs()
def found = []
for (int i = 0; i < lines.size(); i++) {
    def m = lines[i].trim() =~ /^<!--\s*example:\s*([a-z0-9-]+)\s*-->$/
    if (!m.matches()) {
        continue
    }
    def name = m.group(1)
    int j = i + 1
    while (j < lines.size() && lines[j].trim().isEmpty()) {
        j++
    }
    if (j >= lines.size() || lines[j].trim() != '```java') {
        throw new IllegalStateException("README.md line ${i + 1}: the example marker '${name}' is not followed by a ```java block")
    }
    int end = j + 1
    while (end < lines.size() && lines[end].trim() != '```') {
        end++
    }
    if (end >= lines.size()) {
        throw new IllegalStateException("README.md line ${j + 1}: the java block of example '${name}' is not closed")
    }
    def block = lines.subList(j + 1, end)
    def imports = block.findAll { it.startsWith('import ') }
    def body = block.findAll { !it.startsWith('import ') }
    def cls = 'Readme' + name.split('-').collect { it.capitalize() }.join('') + 'Example'
    def src = new StringBuilder()
    src << "// README.md lines ${j + 2}-${end}, example '${name}'\n"
    src << 'package readme;\n\n'
    imports.each { src << it << '\n' }
    src << "\npublic final class ${cls} {\n"
    src << '    public static void main(String[] args) throws Exception {\n'
    body.each { src << (it.isEmpty() ? '' : '        ' + it) << '\n' }
    src << '    }\n}\n'
    new File(out, cls + '.java').setText(src.toString(), 'UTF-8')
    found << name
    println "README example '${name}' (lines ${j + 2}-${end}) -> ${cls}.java"
}
if (!found.containsAll(['verbs', 'cm'])) {
    throw new IllegalStateException("README.md: expected the examples 'verbs' and 'cm' to be marked, found ${found}")
}
return true
