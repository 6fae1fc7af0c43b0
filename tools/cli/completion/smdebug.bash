# bash completion for smdebug (installed to share/bash-completion/completions/smdebug).
# Completes commands, each command's options, modes, formats and reductions, and paths.
_smdebug() {
    local cur prev cmd
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    cmd="${COMP_WORDS[1]}"
    local commands
    commands="$(smdebug --commands 2>/dev/null)"
    [[ -n "$commands" ]] || commands="summary tensors steps collections workers value reductions shapes dump verify compact watch plot report export"
    # the rules commands, registered by the rules layer
    [[ " $commands " == *" rule "* ]] || commands="$commands rule rules"
    if [[ $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
        return
    fi
    case "$prev" in
        --mode) COMPREPLY=($(compgen -W "TRAIN EVAL PREDICT GLOBAL" -- "$cur")); return ;;
        --format)
            if [[ "$cmd" == export ]]; then COMPREPLY=($(compgen -W "csv jsonl npz safetensors tensorboard" -- "$cur"))
            else COMPREPLY=($(compgen -W "text json npy" -- "$cur")); fi
            return ;;
        --reduction|--reduce) COMPREPLY=($(compgen -W "min max mean std variance sum prod l1 l2" -- "$cur")); return ;;
        --out|--ca-file) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --action) COMPREPLY=($(compgen -W "webhook: webhook-slack: signal: exec: stop-file:" -- "$cur")); compopt -o nospace 2>/dev/null; return ;;
        --regex|--collection|--step|--steps|--worker|--tensor|--hist|--histograms|--bins|--max-tensors|--rtol|--atol) return ;;
        --rule)
            local rules
            rules="$(smdebug rules 2>/dev/null | awk '/^[A-Za-z]/ { sub(/[ :].*/, ""); print }')"
            COMPREPLY=($(compgen -W "$rules" -- "$cur")); return ;;
        --other) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --metric|--metrics-port|--metrics-bind|--poll) return ;;
    esac
    local opts="--help"
    case "$cmd" in
        summary) opts="--json --latest --help" ;;
        tensors) opts="--regex --collection --step --mode --help" ;;
        steps) opts="--mode --all --help" ;;
        value) opts="--mode --worker --format --out --full --help" ;;
        reductions) opts="--reduction --abs --mode --worker --precise --json --help" ;;
        shapes) opts="--mode --worker --help" ;;
        dump) opts="--json --values --help" ;;
        verify) opts="--reduction --abs --help" ;;
        compact) opts="--remove --help" ;;
        watch) opts="--tensor --reduction --abs --mode --help" ;;
        plot) opts="--tensor --reduction --abs --mode --log --hist --step --bins --out --help" ;;
        report) opts="--out --reduction --abs --max-tensors --rule --help" ;;
        rule) opts="--param --start-step --end-step --other --action --ca-file --help" ;;
        monitor) opts="--rule --metrics-port --metrics-bind --metric --action --ca-file --stop-on-fire --poll --other --steps --help" ;;
        export) opts="--format --out --step --steps --mode --worker --reduction --abs --tensor --histograms --help" ;;
        serve) opts="--host --port --trust-host --time-limit --steps --wait --help" ;;
        diagnose) opts="--json --help" ;;
        diff) opts="--rtol --atol --json --help" ;;
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    else
        COMPREPLY=($(compgen -d -- "$cur"))
        [[ ${#COMPREPLY[@]} -eq 0 && "$cur" != s3://* ]] && COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -o filenames -F _smdebug smdebug
