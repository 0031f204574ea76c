# scripts/debian-archive.sh: sourced by scripts/build-freethreaded-python and
# scripts/check-headers (not run on its own).
#
# Packages of another Debian suite (trixie's or unstable's CPython) are
# fetched through a *private* apt configuration: its own sources list,
# lists and cache directories under a temporary directory. The archive URI
# and its Signed-By keyring are read from this machine's own apt
# configuration (the entry that serves its own release), so no host name is
# written here. The machine's apt configuration and package state are never
# modified, and nothing fetched this way is installed: a source package is
# only downloaded, a binary package only downloaded and unpacked with
# `dpkg-deb -x` into a directory of ours.

# Find the archive that serves release CODENAME: deb822 .sources files
# first, then one-line sources.list entries. Prints "URI KEYRING" (KEYRING
# is "-" when the entry names none).
sw_find_archive() {
    local codename="$1" f
    shopt -s nullglob
    for f in /etc/apt/sources.list.d/*.sources; do
        awk -v want="$codename" '
            function flush() {
                if (types ~ /(^| )deb( |$)/ && uris != "" && (" " suites " ") ~ (" " want " ")) {
                    split(uris, u, " "); print u[1], (signed == "" ? "-" : signed); found = 1; exit
                }
                types = uris = suites = signed = ""
            }
            /^[ \t]*$/ { flush(); next }
            /^[ \t]*#/ { next }
            /^Types:/     { sub(/^Types:[ \t]*/, "");     types = $0 }
            /^URIs:/      { sub(/^URIs:[ \t]*/, "");      uris = $0 }
            /^Suites:/    { sub(/^Suites:[ \t]*/, "");    suites = $0 }
            /^Signed-By:/ { sub(/^Signed-By:[ \t]*/, ""); signed = $0 }
            END { if (!found) flush() }
        ' "$f" | head -n 1
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [[ -f "$f" ]] || continue
        awk -v want="$codename" '
            $1 == "deb" {
                signed = "-"; i = 2
                if ($2 ~ /^\[/) {
                    for (; i <= NF; i++) {
                        if ($i ~ /^\[?signed-by=/) { s = $i; sub(/^\[?signed-by=/, "", s); sub(/\]$/, "", s); signed = s }
                        if ($i ~ /\]$/) { i++; break }
                    }
                }
                if ($(i + 1) == want) { print $i, signed; exit }
            }' "$f"
    done
    shopt -u nullglob
}

# sw_private_apt DIR TYPE SUITE: a private apt configuration in DIR with one
# entry, "TYPE URI SUITE main" (TYPE: deb-src or deb), on the archive of
# this machine's release; fills the array SW_APT_OPTS with the options that
# select it, and runs `apt-get update` on it. Returns 1 (with a message on
# stderr) when the archive cannot be told or the index cannot be fetched.
sw_private_apt() {
    local dir="$1" type="$2" suite="$3" codename archive uri keyring
    codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
    if [[ -z "$codename" ]]; then
        echo "cannot tell this machine's release from /etc/os-release" >&2
        return 1
    fi
    archive="$(sw_find_archive "$codename" | head -n 1)"
    if [[ -z "$archive" ]]; then
        echo "no apt entry for $codename found in /etc/apt: cannot tell which archive to use" >&2
        return 1
    fi
    read -r uri keyring <<<"$archive"
    mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
    if [[ "$keyring" == - ]]; then
        echo "$type $uri $suite main" >"$dir/sources.list"
    else
        echo "$type [signed-by=$keyring] $uri $suite main" >"$dir/sources.list"
    fi
    SW_APT_OPTS=(-o "Dir::Etc::sourcelist=$dir/sources.list"
                 -o "Dir::Etc::sourceparts=$dir/none"
                 -o "Dir::State::Lists=$dir/lists"
                 -o "Dir::Cache=$dir/cache"
                 -o "APT::Get::List-Cleanup=0"
                 -o "APT::Sandbox::User=root")  # the private dirs are root's
    echo "apt-get update: $type index of $suite only ($uri), private lists" >&2
    apt-get "${SW_APT_OPTS[@]}" update -qq
}
