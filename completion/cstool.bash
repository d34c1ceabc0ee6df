# bash completion for cstool(1).
#
# Subcommands and options are read from the binary's own --help at completion time,
# so the completion never falls behind the program. Install as
# share/bash-completion/completions/cstool (the CMake install target does).

_cstool_subcommands() {
  "$1" --help 2>/dev/null |
    awk '/^Subcommands:/ {f = 1; next} f && /^  [a-z]/ {print $1} f && /^$/ {f = 0}'
}

_cstool_options() {
  "$1" "$2" --help 2>/dev/null |
    awk '/^  -/ {n = split($1, a, ","); for (i = 1; i <= n; i++) print a[i]}'
}

_cstool() {
  local cmd=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} prev=
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  COMPREPLY=()

  local i sub= subpos=0
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      -*) ;;
      *) sub=${COMP_WORDS[i]}; subpos=$i; break ;;
    esac
  done

  if [[ -z $sub ]]; then
    if [[ $cur == -* ]]; then
      mapfile -t COMPREPLY < <(compgen -W "--help --version" -- "$cur")
    else
      mapfile -t COMPREPLY < <(compgen -W "$(_cstool_subcommands "$cmd")" -- "$cur")
    fi
    return 0
  fi

  if [[ $sub == help ]]; then
    ((COMP_CWORD == subpos + 1)) &&
      mapfile -t COMPREPLY < <(compgen -W "$(_cstool_subcommands "$cmd")" -- "$cur")
    return 0
  fi

  # After "--" comes the command to run (record -- CMD ARGS...), or for diff the NEW
  # recordings (diff BASE... -- NEW...).
  for ((i = subpos + 1; i < COMP_CWORD; i++)); do
    if [[ ${COMP_WORDS[i]} == -- ]]; then
      if ((COMP_CWORD == i + 1)) && [[ $sub != diff ]]; then
        mapfile -t COMPREPLY < <(compgen -c -- "$cur")
      else
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      fi
      return 0
    fi
  done

  case $prev in
    --format)
      # Each subcommand's own formats (its --help "Output format:" line).
      local formats="table json"
      [[ $sub == report ]] && formats="table json csv sqlite jsonl"
      [[ $sub == diff ]] && formats="table json csv"
      mapfile -t COMPREPLY < <(compgen -W "$formats" -- "$cur")
      return 0
      ;;
    -s | --sort)
      [[ $sub == report ]] || return 0
      mapfile -t COMPREPLY < <(compgen -W "switches voluntary involuntary lifetime migrations before_migration longest_wait oncpu \
        wait asleep tid pid comm user sys irq softirq wait_cpu_wakeup wait_cpu_preempted sleep sleep_futex \
        sleep_poll sleep_uninterruptible sleep_paging stopped zombie unknown" -- "$cur")
      return 0
      ;;
    --source)
      mapfile -t COMPREPLY < <(compgen -W "timer ipi nmi" -- "$cur")
      return 0
      ;;
    -c | --counters | -V | --virtual-counters)
      # A comma-separated list: complete the name after the last comma.
      local names="instructions cycles cache-references cache-misses branches branch-misses \
        task-clock page-faults minor-faults major-faults cpu-migrations context-switches"
      [[ $prev == -V || $prev == --virtual-counters ]] && names="read-bytes write-bytes energy"
      local head=
      [[ $cur == *,* ]] && head=${cur%,*},
      mapfile -t COMPREPLY < <(compgen -P "$head" -W "$names" -- "${cur##*,}")
      compopt -o nospace 2>/dev/null
      return 0
      ;;
    -T | --interval | --counter-interval | --period)
      COMPREPLY=()
      return 0
      ;;
    --timeline-format)
      mapfile -t COMPREPLY < <(compgen -W "auto json proto" -- "$cur")
      return 0
      ;;
    --reader)
      mapfile -t COMPREPLY < <(compgen -W "auto fast libtracecmd" -- "$cur")
      return 0
      ;;
    --html-range | --limit | --from | --to | --critical-path | --buffer)
      # FROM:TO or seconds from the trace start, a row count, a thread id, a buffer's name
      # (the file's threads and buffers are not known here): nothing to complete.
      COMPREPLY=()
      return 0
      ;;
    --host)
      mapfile -t COMPREPLY < <(compgen -A hostname -- "$cur")
      return 0
      ;;
    --trigger)
      # record --flight's conditions: STATE>DURATION (see cstool-record(1)).
      mapfile -t COMPREPLY < <(compgen -W "sleep>100ms wait_cpu>5ms sleep:futex>50ms \
        sleep_uninterruptible>20ms" -- "$cur")
      return 0
      ;;
    --dump)
      # Running recorders, by their tracefs instances cstool-PID.
      mapfile -t COMPREPLY < <(compgen -W "$(ls /sys/kernel/tracing/instances 2>/dev/null |
        sed -n 's/^cstool-//p')" -- "$cur")
      return 0
      ;;
    --flight | --max-dumps | --max-size)
      # A number (SECS, N, SIZE such as 500M): nothing to complete.
      COMPREPLY=()
      return 0
      ;;
    -o | --output | --timeline | --html | --recover)
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return 0
      ;;
  esac

  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_cstool_options "$cmd" "$sub")" -- "$cur")
  else
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  fi
  return 0
}

complete -o filenames -F _cstool cstool
